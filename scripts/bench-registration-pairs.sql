-- The ingest's added cost of migration 16 per batch (docs/ANALYTICS.md "Devices per registration"), on a bench world
-- kept with BENCH_KEEP=1: psql -p $BENCH_PG_PORT -U itour -d bench_… -f scripts/bench-registration-pairs.sql
-- A batch of 20 000 (scope, device, day) triples sampled from device_days with the day moved 0–2 days on, and 500 of its
-- devices given a newer registration with random values (the bench's share: one in a quarter of the sessions). One
-- round (run it several times, alternated: each sample is new), each part in a rolled-back transaction: A the activity statement alone (as before migration 16), B the row locks,
-- the registrations' names and the pairs statement (PostgresIngestStore.bucketDeviceDays), then the same activity
-- statement. The statements are the ingest's, the batch's arrays
-- aggregated from temporary tables (unnest of an array, as the ingest binds them, so the planner guesses as it does there).
\set ON_ERROR_STOP on
SET search_path TO analytics;
SET jit = off;
CREATE TEMP TABLE sample AS
    SELECT scope AS s, device_id AS m, (day - DATE '1970-01-01') + (random() * 2)::int AS d
    FROM device_days TABLESAMPLE SYSTEM (5) ORDER BY random() LIMIT 20000;
CREATE TEMP TABLE reg AS
    SELECT DISTINCT ON (m) m AS device_id, now() AS at, gen_random_uuid() AS event_id,
           (ARRAY['ios', 'android'])[1 + (random() * 1)::int] AS p, (ARRAY['iPhone 15', 'Pixel 8', 'Galaxy S24'])[1 + (random() * 2)::int] AS mo,
           (ARRAY['17.4', '18.0', '14'])[1 + (random() * 2)::int] AS o, (ARRAY['2.0.0', '2.1.0'])[1 + (random() * 1)::int] AS a
    FROM sample ORDER BY m, random() LIMIT 500;
ANALYZE sample;
ANALYZE reg;
\timing on
\echo A: activity statement alone
BEGIN;
WITH batch AS (
    SELECT s, m, range_agg(daterange(DATE '1970-01-01' + d, DATE '1970-01-01' + d, '[]')) AS days FROM unnest((SELECT array_agg(s) FROM sample), (SELECT array_agg(m) FROM sample), (SELECT array_agg(d) FROM sample)) AS x(s, m, d) GROUP BY s, m
), old AS MATERIALIZED (
    SELECT a.scope, a.device_id AS member, a.days FROM device_activity a
    WHERE (a.scope, a.device_id) IN (SELECT s, m FROM batch)
    ORDER BY a.scope, a.device_id FOR UPDATE
), changed AS MATERIALIZED (
    SELECT b.s, b.m, COALESCE(o.days, '{}') AS old, b.days - COALESCE(o.days, '{}') AS added, o.scope IS NOT NULL AS existed
    FROM batch b LEFT JOIN old o ON o.scope = b.s AND o.member = b.m
    WHERE NOT isempty(b.days - COALESCE(o.days, '{}'))
), stored AS (
    INSERT INTO device_activity AS a (scope, device_id, days)
    SELECT s, m, added FROM changed ORDER BY s, m
    ON CONFLICT (scope, device_id) DO UPDATE SET days = a.days + EXCLUDED.days
    RETURNING a.scope, a.device_id AS member, a.xmax <> 0 AS updated
), added_days AS (
    SELECT c.s, c.old, c.old + c.added AS new, c.added, lower(r) + g AS day
    FROM changed c, unnest(c.added) r, generate_series(0, upper(r) - lower(r) - 1) g
), touched AS (
    SELECT s, old, new, day FROM added_days
    UNION ALL
    SELECT s, old, new, n FROM (SELECT s, old, new, added, lower(new * datemultirange(daterange(day + 1, NULL))) AS n FROM added_days) x
    WHERE n IS NOT NULL AND NOT added @> n
), pairs AS (
    SELECT s, day, COALESCE(upper(new * datemultirange(daterange(NULL, day))) - 1, '-infinity') AS previous, 1 AS n FROM touched
    UNION ALL
    SELECT s, day, COALESCE(upper(old * datemultirange(daterange(NULL, day))) - 1, '-infinity'), -1 FROM touched WHERE old @> day
), counted AS (
    INSERT INTO active_day_pairs AS p (scope, kind, day, previous, members)
    SELECT s, 'd', day, previous, sum(n) FROM pairs GROUP BY s, day, previous HAVING sum(n) <> 0
    ORDER BY s, day, previous
    ON CONFLICT (scope, kind, day, previous) DO UPDATE SET members = p.members + EXCLUDED.members
)
SELECT count(*)::bigint FROM stored s JOIN changed c ON c.s = s.scope AND c.m = s.member WHERE s.updated AND NOT c.existed;
ROLLBACK;
\echo B: locks, names, pairs statement, then the activity statement
BEGIN;
WITH keys AS (
    SELECT DISTINCT s, m FROM unnest((SELECT array_agg(s) FROM sample), (SELECT array_agg(m) FROM sample)) AS x(s, m)
), locked AS MATERIALIZED (
    SELECT a.scope, a.device_id FROM device_activity a
    WHERE (a.scope, a.device_id) IN (SELECT s, m FROM keys)
    ORDER BY a.scope, a.device_id FOR UPDATE
), missing AS MATERIALIZED (
    SELECT s, m FROM keys k WHERE NOT EXISTS (SELECT 1 FROM locked l WHERE l.scope = k.s AND l.device_id = k.m)
), inserted AS (
    INSERT INTO device_activity (scope, device_id, days)
    SELECT s, m, '{}' FROM missing ORDER BY s, m
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT ((SELECT count(*) FROM missing) - (SELECT count(*) FROM inserted))::bigint;
INSERT INTO registrations (registration, platform, model, os_version, app_version)
SELECT DISTINCT ON (k) k, p, m, o, a FROM (
    SELECT registration_key(p, mo, o, a) AS k, p, mo AS m, o, a FROM reg
) r
ORDER BY k
ON CONFLICT DO NOTHING;
WITH batch AS (
    SELECT s, m, range_agg(daterange(DATE '1970-01-01' + d, DATE '1970-01-01' + d, '[]')) AS days FROM unnest((SELECT array_agg(s) FROM sample), (SELECT array_agg(m) FROM sample), (SELECT array_agg(d) FROM sample)) AS x(s, m, d) GROUP BY s, m
), changed AS MATERIALIZED (
    SELECT b.s, b.m, a.days AS old, b.days - a.days AS added
    FROM batch b JOIN device_activity a ON a.scope = b.s AND a.device_id = b.m
    WHERE NOT isempty(b.days - a.days)
), added_days AS (
    SELECT c.s, c.m, c.old, c.old + c.added AS new, c.added, lower(r) + g AS day
    FROM changed c, unnest(c.added) r, generate_series(0, upper(r) - lower(r) - 1) g
), touched AS (
    SELECT s, m, old, new, day FROM added_days
    UNION ALL
    SELECT s, m, old, new, n FROM (SELECT s, m, old, new, added, lower(new * datemultirange(daterange(day + 1, NULL))) AS n FROM added_days) x
    WHERE n IS NOT NULL AND NOT added @> n
), pairs AS (
    SELECT s, m, day, COALESCE(upper(new * datemultirange(daterange(NULL, day))) - 1, '-infinity') AS previous, 1 AS n FROM touched
    UNION ALL
    SELECT s, m, day, COALESCE(upper(old * datemultirange(daterange(NULL, day))) - 1, '-infinity'), -1 FROM touched WHERE old @> day
), brought AS (
    SELECT DISTINCT ON (k.m) k.m, r.device_id IS NOT NULL AS h, r.at, r.event_id, r.p, r.mo, r.o, r.a
    FROM (SELECT DISTINCT m FROM sample) k LEFT JOIN reg r ON r.device_id = k.m
), buckets AS MATERIALIZED (
    SELECT r.m, registration_key(d.platform, d.model, d.os_version, d.app_version) AS held,
           CASE WHEN r.h AND (d.device_id IS NULL OR (r.at, r.event_id) > (d.registered_at, d.event_id))
                THEN registration_key(r.p, r.mo, r.o, r.a)
                ELSE registration_key(d.platform, d.model, d.os_version, d.app_version) END AS bucket
    FROM unnest((SELECT array_agg(m ORDER BY m) FROM brought), (SELECT array_agg(h ORDER BY m) FROM brought), (SELECT array_agg(at ORDER BY m) FROM brought),
                (SELECT array_agg(event_id ORDER BY m) FROM brought), (SELECT array_agg(p ORDER BY m) FROM brought), (SELECT array_agg(mo ORDER BY m) FROM brought),
                (SELECT array_agg(o ORDER BY m) FROM brought), (SELECT array_agg(a ORDER BY m) FROM brought)) AS r(m, h, at, event_id, p, mo, o, a)
    LEFT JOIN devices d ON d.device_id = r.m
), moved AS (
    SELECT a.scope AS s, p.day, p.previous, b.held, b.bucket
    FROM buckets b JOIN device_activity a ON a.device_id = b.m, day_pairs(a.days) p
    WHERE b.held <> b.bucket
), deltas AS (
    SELECT x.s, x.day, x.previous, b.bucket AS registration, x.n FROM pairs x JOIN buckets b ON b.m = x.m
    UNION ALL
    SELECT s, day, previous, held, -1 FROM moved
    UNION ALL
    SELECT s, day, previous, bucket, 1 FROM moved
)
INSERT INTO registration_day_pairs AS p (scope, day, previous, registration, members)
SELECT s, day, previous, registration, sum(n) FROM deltas
GROUP BY s, day, previous, registration HAVING sum(n) <> 0
ORDER BY s, day, previous, registration
ON CONFLICT (scope, day, previous, registration) DO UPDATE SET members = p.members + EXCLUDED.members;
WITH batch AS (
    SELECT s, m, range_agg(daterange(DATE '1970-01-01' + d, DATE '1970-01-01' + d, '[]')) AS days FROM unnest((SELECT array_agg(s) FROM sample), (SELECT array_agg(m) FROM sample), (SELECT array_agg(d) FROM sample)) AS x(s, m, d) GROUP BY s, m
), old AS MATERIALIZED (
    SELECT a.scope, a.device_id AS member, a.days FROM device_activity a
    WHERE (a.scope, a.device_id) IN (SELECT s, m FROM batch)
    ORDER BY a.scope, a.device_id FOR UPDATE
), changed AS MATERIALIZED (
    SELECT b.s, b.m, COALESCE(o.days, '{}') AS old, b.days - COALESCE(o.days, '{}') AS added, o.scope IS NOT NULL AS existed
    FROM batch b LEFT JOIN old o ON o.scope = b.s AND o.member = b.m
    WHERE NOT isempty(b.days - COALESCE(o.days, '{}'))
), stored AS (
    INSERT INTO device_activity AS a (scope, device_id, days)
    SELECT s, m, added FROM changed ORDER BY s, m
    ON CONFLICT (scope, device_id) DO UPDATE SET days = a.days + EXCLUDED.days
    RETURNING a.scope, a.device_id AS member, a.xmax <> 0 AS updated
), added_days AS (
    SELECT c.s, c.old, c.old + c.added AS new, c.added, lower(r) + g AS day
    FROM changed c, unnest(c.added) r, generate_series(0, upper(r) - lower(r) - 1) g
), touched AS (
    SELECT s, old, new, day FROM added_days
    UNION ALL
    SELECT s, old, new, n FROM (SELECT s, old, new, added, lower(new * datemultirange(daterange(day + 1, NULL))) AS n FROM added_days) x
    WHERE n IS NOT NULL AND NOT added @> n
), pairs AS (
    SELECT s, day, COALESCE(upper(new * datemultirange(daterange(NULL, day))) - 1, '-infinity') AS previous, 1 AS n FROM touched
    UNION ALL
    SELECT s, day, COALESCE(upper(old * datemultirange(daterange(NULL, day))) - 1, '-infinity'), -1 FROM touched WHERE old @> day
), counted AS (
    INSERT INTO active_day_pairs AS p (scope, kind, day, previous, members)
    SELECT s, 'd', day, previous, sum(n) FROM pairs GROUP BY s, day, previous HAVING sum(n) <> 0
    ORDER BY s, day, previous
    ON CONFLICT (scope, kind, day, previous) DO UPDATE SET members = p.members + EXCLUDED.members
)
SELECT count(*)::bigint FROM stored s JOIN changed c ON c.s = s.scope AND c.m = s.member WHERE s.updated AND NOT c.existed;
ROLLBACK;
