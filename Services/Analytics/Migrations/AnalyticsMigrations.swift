import Shared

/// The `analytics` schema, in order. Never edit a shipped migration; add one. Statements name tables
/// without a schema: the runner sets the search path, so a replay can build the same tables in a fresh
/// schema (AnalyticsSchema).
enum AnalyticsMigrations {
    static let all: [Migration] = [
        Migration(1, "consumer offsets", """
            -- Offsets of tracking.events, written in the same transaction as the aggregates they produced.
            CREATE TABLE consumer_offsets (
                topic text NOT NULL,
                partition integer NOT NULL,
                next_offset bigint NOT NULL,
                PRIMARY KEY (topic, partition)
            );
            """),
        Migration(2, "report aggregates", """
            -- The id of every event counted: a redelivered event finds its id here and changes nothing.
            CREATE TABLE processed_events (
                event_id uuid PRIMARY KEY
            );

            -- A scope is the set of events a row summarises: the nil UUID for all events, else a tour id for
            -- the events carrying that tourId. Distinct devices and tourists are kept per day, so a distinct
            -- count over any range is exact: count the distinct members of the range's rows.
            CREATE TABLE day_devices (
                scope uuid NOT NULL,
                day date NOT NULL,
                device_id text NOT NULL,
                PRIMARY KEY (scope, day, device_id)
            );
            CREATE TABLE day_tourists (
                scope uuid NOT NULL,
                day date NOT NULL,
                tourist_id text NOT NULL,
                PRIMARY KEY (scope, day, tourist_id)
            );

            -- poi.viewed, poi.arrived, poi.left and media.played per scope, day and POI.
            CREATE TABLE day_poi_stats (
                scope uuid NOT NULL,
                day date NOT NULL,
                poi_id uuid NOT NULL,
                views bigint NOT NULL,
                visits bigint NOT NULL,
                dwell_count bigint NOT NULL,
                dwell_sum double precision NOT NULL,
                media_plays bigint NOT NULL,
                PRIMARY KEY (scope, day, poi_id)
            );

            -- tour.started and tour.completed per day and tour.
            CREATE TABLE day_tour_stats (
                day date NOT NULL,
                tour_id uuid NOT NULL,
                starts bigint NOT NULL,
                completions bigint NOT NULL,
                duration_count bigint NOT NULL,
                duration_sum double precision NOT NULL,
                PRIMARY KEY (day, tour_id)
            );

            -- Each device's latest device.registered, by occurredAt and then event id.
            CREATE TABLE devices (
                device_id text PRIMARY KEY,
                registered_at timestamptz NOT NULL,
                event_id uuid NOT NULL,
                platform text NOT NULL,
                model text NOT NULL,
                os_version text NOT NULL,
                app_version text NOT NULL
            );

            -- Tour and POI names from catalog.events, kept after a deletion so past reports still name them.
            CREATE TABLE catalog_names (
                entity_id uuid PRIMARY KEY,
                kind text NOT NULL,
                name text NOT NULL,
                version integer NOT NULL
            );
            """),
        Migration(3, "room for in-place updates", """
            -- Each batch adds to rows already there: with free space on their pages Postgres rewrites them in
            -- place (HOT updates) instead of adding index entries for every new row version.
            ALTER TABLE day_poi_stats SET (fillfactor = 70);
            ALTER TABLE day_tour_stats SET (fillfactor = 70);
            ALTER TABLE devices SET (fillfactor = 80);
            ALTER TABLE consumer_offsets SET (fillfactor = 50);
            -- Ids compared byte by byte whatever the cluster's locale: distinct counts hash and sort them.
            ALTER TABLE day_devices ALTER COLUMN device_id TYPE text COLLATE "C";
            ALTER TABLE day_tourists ALTER COLUMN tourist_id TYPE text COLLATE "C";
            ALTER TABLE devices ALTER COLUMN device_id TYPE text COLLATE "C";
            """),
        Migration(4, "activity as day ranges", """
            -- The UTC days each device (and tourist) had events on, per scope, as one multirange a row:
            -- a distinct count over any range is then a count of the rows whose days overlap it, with no
            -- de-duplication at query time, and per-day counts come from expanding the overlapping part.
            CREATE TABLE device_activity (
                scope uuid NOT NULL,
                device_id text COLLATE "C" NOT NULL,
                days datemultirange NOT NULL,
                PRIMARY KEY (scope, device_id)
            ) WITH (fillfactor = 70);
            CREATE TABLE tourist_activity (
                scope uuid NOT NULL,
                tourist_id text COLLATE "C" NOT NULL,
                days datemultirange NOT NULL,
                PRIMARY KEY (scope, tourist_id)
            ) WITH (fillfactor = 70);
            INSERT INTO device_activity (scope, device_id, days)
                SELECT scope, device_id, range_agg(daterange(day, day, '[]')) FROM day_devices GROUP BY scope, device_id;
            INSERT INTO tourist_activity (scope, tourist_id, days)
                SELECT scope, tourist_id, range_agg(daterange(day, day, '[]')) FROM day_tourists GROUP BY scope, tourist_id;
            DROP TABLE day_devices;
            DROP TABLE day_tourists;
            """),
        Migration(5, "devices per day", """
            -- The daily series' device counts, kept as counters: a (scope, day, device) triple counts once,
            -- when its insert into device_days is not a conflict, which the unique index makes exact even
            -- with two writers at once.
            CREATE TABLE device_days (
                scope uuid NOT NULL,
                day date NOT NULL,
                device_id text COLLATE "C" NOT NULL,
                PRIMARY KEY (scope, day, device_id)
            );
            CREATE TABLE day_device_counts (
                scope uuid NOT NULL,
                day date NOT NULL,
                devices bigint NOT NULL,
                PRIMARY KEY (scope, day)
            ) WITH (fillfactor = 70);
            INSERT INTO device_days (scope, day, device_id)
                SELECT a.scope, d::date, a.device_id
                FROM device_activity a, unnest(a.days) AS r, generate_series(lower(r), upper(r) - 1, interval '1 day') AS d;
            INSERT INTO day_device_counts (scope, day, devices)
                SELECT scope, day, count(*) FROM device_days GROUP BY scope, day;
            """),
        Migration(6, "tour attribution", """
            -- Each device's tour.started ('s') and tour.completed ('c'): what decides which tour its tourless
            -- events carry (DESIGN.md, "Tour attribution").
            CREATE TABLE tour_marks (
                device_id text COLLATE "C" NOT NULL,
                occurred_at timestamptz NOT NULL,
                event_id uuid NOT NULL,
                kind "char" NOT NULL,
                tour_id uuid NOT NULL,
                tourist_id text COLLATE "C",
                PRIMARY KEY (device_id, occurred_at, event_id)
            );
            -- The poi.* and media.played events that came without a tour, with the tour they are credited to
            -- now (NULL: none). Their counts are in the all-events scope as they arrive, and in their tour's
            -- scope while credited to it.
            CREATE TABLE untoured_events (
                event_id uuid PRIMARY KEY,
                device_id text COLLATE "C" NOT NULL,
                tourist_id text COLLATE "C",
                occurred_at timestamptz NOT NULL,
                type text NOT NULL,
                poi_id uuid NOT NULL,
                dwell_seconds double precision,
                tour_id uuid
            );
            CREATE INDEX untoured_events_by_device ON untoured_events (device_id, occurred_at);
            CREATE INDEX untoured_events_by_tour ON untoured_events (tour_id, occurred_at) WHERE tour_id IS NOT NULL;
            """),
        Migration(7, "funnel, hours and searches", """
            -- DESIGN.md "Funnel", "Hour × weekday", "Searches". Counted from the events read after this migration
            -- (a replay counts the older ones too).
            -- A tour's stops in walking order, as catalog last published them.
            ALTER TABLE catalog_names ADD COLUMN stops uuid[];
            -- Each device's poi.arrived at a POI carrying a tour itself, per day (credited ones: untoured_events).
            CREATE TABLE stop_visits (
                tour_id uuid NOT NULL,
                poi_id uuid NOT NULL,
                day date NOT NULL,
                device_id text COLLATE "C" NOT NULL,
                PRIMARY KEY (tour_id, day, poi_id, device_id)
            );
            -- poi.arrived counts by scope, day and UTC hour.
            CREATE TABLE hour_visits (
                scope uuid NOT NULL,
                day date NOT NULL,
                hour smallint NOT NULL,
                visits bigint NOT NULL,
                PRIMARY KEY (scope, day, hour)
            ) WITH (fillfactor = 70);
            -- search.performed counts by day and folded query.
            CREATE TABLE day_searches (
                day date NOT NULL,
                query text COLLATE "C" NOT NULL,
                searches bigint NOT NULL,
                zero_results bigint NOT NULL,
                PRIMARY KEY (day, query)
            ) WITH (fillfactor = 70);
            """),
        Migration(8, "credited members", """
            -- The devices ('d') and tourists ('t') a tour's credited events add to a day (DESIGN.md "Tour
            -- attribution"), with how many credited events each has there, so reports need not read every
            -- credited event. A member the tour's own events already count that day (device_days,
            -- tourist_activity) is counted there for good; its row here no longer matters and is not kept up.
            CREATE TABLE credited_members (
                tour_id uuid NOT NULL,
                day date NOT NULL,
                kind "char" NOT NULL,
                member text COLLATE "C" NOT NULL,
                events integer NOT NULL,
                PRIMARY KEY (tour_id, day, kind, member)
            ) WITH (fillfactor = 70);
            INSERT INTO credited_members (tour_id, day, kind, member, events)
            SELECT u.tour_id, (u.occurred_at AT TIME ZONE 'UTC')::date, 'd', u.device_id, count(*)
            FROM untoured_events u
            WHERE u.tour_id IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM device_days d
                WHERE d.scope = u.tour_id AND d.day = (u.occurred_at AT TIME ZONE 'UTC')::date AND d.device_id = u.device_id)
            GROUP BY 1, 2, 3, 4;
            INSERT INTO credited_members (tour_id, day, kind, member, events)
            SELECT u.tour_id, (u.occurred_at AT TIME ZONE 'UTC')::date, 't', u.tourist_id, count(*)
            FROM untoured_events u
            WHERE u.tour_id IS NOT NULL AND u.tourist_id IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM tourist_activity a
                WHERE a.scope = u.tour_id AND a.tourist_id = u.tourist_id AND a.days @> (u.occurred_at AT TIME ZONE 'UTC')::date)
            GROUP BY 1, 2, 3, 4;
            """),
        Migration(9, "most viewed", """
            -- event.viewed ('e'), page.viewed ('p') and person.viewed ('s') counts per day and item (DESIGN.md "Most viewed").
            CREATE TABLE day_item_views (
                day date NOT NULL,
                kind "char" NOT NULL,
                item_id uuid NOT NULL,
                views bigint NOT NULL,
                PRIMARY KEY (day, kind, item_id)
            ) WITH (fillfactor = 70);
            """),
        Migration(10, "view sources", """
            -- poi.viewed counts per day and `via` (DESIGN.md "Sources").
            CREATE TABLE day_view_sources (
                day date NOT NULL,
                via text NOT NULL,
                views bigint NOT NULL,
                PRIMARY KEY (day, via)
            ) WITH (fillfactor = 70);
            """),
        Migration(11, "languages", """
            -- tour.started and poi.viewed counts per day and the app's language (DESIGN.md "Languages", issue 45): the tag in
            -- its conventional case, 'unknown' for events without one. Tags are compared byte by byte (COLLATE "C"): analytics
            -- folds their case before storing them.
            CREATE TABLE day_languages (
                day date NOT NULL,
                language text COLLATE "C" NOT NULL,
                tour_starts bigint NOT NULL,
                poi_views bigint NOT NULL,
                PRIMARY KEY (day, language)
            ) WITH (fillfactor = 70);
            -- No event counted before carried a language: what was counted so far is 'unknown', so the columns keep summing
            -- to the summary's tours started and POI views.
            INSERT INTO day_languages (day, language, tour_starts, poi_views)
            SELECT day, 'unknown', sum(starts), sum(views) FROM (
                SELECT day, starts, 0 AS views FROM day_tour_stats
                UNION ALL
                SELECT day, 0, views FROM day_poi_stats WHERE scope = '00000000-0000-0000-0000-000000000000'
            ) counted
            GROUP BY day
            HAVING sum(starts) > 0 OR sum(views) > 0;
            """),
        Migration(12, "pseudonymous ids", """
            -- Device and tourist ids are stored only as pseudonyms (HMAC-SHA-256 with ANALYTICS_ID_KEY, docs/PRIVACY.md). The
            -- tables holding ids are renamed *_unhashed and made again empty; analytics moves their rows into the new tables in
            -- batches after start-up, hashing each id with its key (IdConversion), and drops each *_unhashed table once empty. The
            -- key cannot be in a migration, and a renamed table tells converted rows from raw ones without guessing by shape.
            -- Pseudonyms are uuid columns (16 bytes): the version before binds ids as text, which Postgres will not store in a
            -- uuid column, so a replica of it still running during the upgrade fails its batches (and retries them) instead of
            -- writing raw ids here (docs/ANALYTICS.md "Upgrading"). Every index here is built on an empty table.
            ALTER TABLE device_activity RENAME TO device_activity_unhashed;
            ALTER INDEX device_activity_pkey RENAME TO device_activity_unhashed_pkey;
            CREATE TABLE device_activity (
                scope uuid NOT NULL,
                device_id uuid NOT NULL,
                days datemultirange NOT NULL,
                PRIMARY KEY (scope, device_id)
            ) WITH (fillfactor = 70);
            -- An erasure finds a device's rows by these (PostgresErasureStore): the primary keys of device_activity,
            -- device_days, stop_visits and credited_members do not start with the device.
            CREATE INDEX device_activity_by_device ON device_activity (device_id);
            ALTER TABLE tourist_activity RENAME TO tourist_activity_unhashed;
            ALTER INDEX tourist_activity_pkey RENAME TO tourist_activity_unhashed_pkey;
            CREATE TABLE tourist_activity (
                scope uuid NOT NULL,
                tourist_id uuid NOT NULL,
                days datemultirange NOT NULL,
                PRIMARY KEY (scope, tourist_id)
            ) WITH (fillfactor = 70);
            ALTER TABLE device_days RENAME TO device_days_unhashed;
            ALTER INDEX device_days_pkey RENAME TO device_days_unhashed_pkey;
            CREATE TABLE device_days (
                scope uuid NOT NULL,
                day date NOT NULL,
                device_id uuid NOT NULL,
                PRIMARY KEY (scope, day, device_id)
            );
            CREATE INDEX device_days_by_device ON device_days (device_id);
            ALTER TABLE devices RENAME TO devices_unhashed;
            ALTER INDEX devices_pkey RENAME TO devices_unhashed_pkey;
            CREATE TABLE devices (
                device_id uuid PRIMARY KEY,
                registered_at timestamptz NOT NULL,
                event_id uuid NOT NULL,
                platform text NOT NULL,
                model text NOT NULL,
                os_version text NOT NULL,
                app_version text NOT NULL
            ) WITH (fillfactor = 80);
            ALTER TABLE tour_marks RENAME TO tour_marks_unhashed;
            ALTER INDEX tour_marks_pkey RENAME TO tour_marks_unhashed_pkey;
            CREATE TABLE tour_marks (
                device_id uuid NOT NULL,
                occurred_at timestamptz NOT NULL,
                event_id uuid NOT NULL,
                kind "char" NOT NULL,
                tour_id uuid NOT NULL,
                tourist_id uuid,
                PRIMARY KEY (device_id, occurred_at, event_id)
            );
            ALTER TABLE untoured_events RENAME TO untoured_events_unhashed;
            ALTER INDEX untoured_events_pkey RENAME TO untoured_events_unhashed_pkey;
            ALTER INDEX untoured_events_by_device RENAME TO untoured_events_unhashed_by_device;
            ALTER INDEX untoured_events_by_tour RENAME TO untoured_events_unhashed_by_tour;
            CREATE TABLE untoured_events (
                event_id uuid PRIMARY KEY,
                device_id uuid NOT NULL,
                tourist_id uuid,
                occurred_at timestamptz NOT NULL,
                type text NOT NULL,
                poi_id uuid NOT NULL,
                dwell_seconds double precision,
                tour_id uuid
            );
            CREATE INDEX untoured_events_by_device ON untoured_events (device_id, occurred_at);
            CREATE INDEX untoured_events_by_tour ON untoured_events (tour_id, occurred_at) WHERE tour_id IS NOT NULL;
            ALTER TABLE stop_visits RENAME TO stop_visits_unhashed;
            ALTER INDEX stop_visits_pkey RENAME TO stop_visits_unhashed_pkey;
            CREATE TABLE stop_visits (
                tour_id uuid NOT NULL,
                poi_id uuid NOT NULL,
                day date NOT NULL,
                device_id uuid NOT NULL,
                PRIMARY KEY (tour_id, day, poi_id, device_id)
            );
            CREATE INDEX stop_visits_by_device ON stop_visits (device_id);
            ALTER TABLE credited_members RENAME TO credited_members_unhashed;
            ALTER INDEX credited_members_pkey RENAME TO credited_members_unhashed_pkey;
            CREATE TABLE credited_members (
                tour_id uuid NOT NULL,
                day date NOT NULL,
                kind "char" NOT NULL,
                member uuid NOT NULL,
                events integer NOT NULL,
                PRIMARY KEY (tour_id, day, kind, member)
            ) WITH (fillfactor = 70);
            CREATE INDEX credited_members_by_device ON credited_members (member) WHERE kind = 'd';
            -- Each DELETE /v1/devices/{deviceId}: the device's pseudonym (never the id sent), when, who asked and why (as the
            -- request said), the client address it came from, and the rows removed per table. Kept: the record that it was
            -- done, and what makes the ingest (and a replay) drop the device's events from before it (docs/PRIVACY.md).
            CREATE TABLE erasures (
                id bigserial PRIMARY KEY,
                device_id uuid NOT NULL,
                erased_at timestamptz NOT NULL DEFAULT now(),
                requested_by text NOT NULL,
                reason text NOT NULL,
                client text NOT NULL,
                removed jsonb NOT NULL
            );
            CREATE INDEX erasures_by_device ON erasures (device_id, erased_at);
            -- An HMAC of a fixed label under ANALYTICS_ID_KEY (never the key), stored by the first replica to start: a
            -- replica whose key gives another refuses to start (IdKeyFingerprint).
            CREATE TABLE id_key (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                fingerprint text NOT NULL
            );
            """),
        Migration(13, "retention", """
            -- The UTC day each event id was counted: ids are kept only while a redelivery is possible, event-level rows for
            -- ANALYTICS_RETENTION_DAYS (docs/ANALYTICS.md "Retention"). Ids counted before this migration count as counted
            -- today. A default that is not volatile adds the column without rewriting the table.
            ALTER TABLE processed_events ADD COLUMN counted_on date NOT NULL DEFAULT ((now() AT TIME ZONE 'UTC')::date);
            -- Pruning finds old rows by these: block-range indexes, a few pages each, since rows arrive roughly in time order.
            CREATE INDEX processed_events_by_counted_on ON processed_events USING brin (counted_on);
            CREATE INDEX tour_marks_by_time ON tour_marks USING brin (occurred_at);
            CREATE INDEX untoured_events_by_time ON untoured_events USING brin (occurred_at);
            CREATE INDEX device_days_by_day ON device_days USING brin (day);
            CREATE INDEX stop_visits_by_day ON stop_visits USING brin (day);
            CREATE INDEX credited_members_by_day ON credited_members USING brin (day);
            """),
        Migration(14, "distinct members by day pairs, credited arrivals by hour", """
            -- Distinct devices ('d') and tourists ('t') of a scope over any range, from O(days) rows whatever the number of
            -- members (docs/ANALYTICS.md "Distinct counts"): a member is active in [f, t] iff its first active day d in [f, t]
            -- has its previous active day p before f. So per scope, kind, day d and previous active day p ('-infinity': none),
            -- how many members have d active with p the active day before it; a range's distinct count is the sum over
            -- f <= d <= t and p < f. The ingest keeps it in step with device_activity and tourist_activity, in the same
            -- transaction. An aggregate: pruning keeps it, an erasure takes the device's pairs out.
            CREATE TABLE active_day_pairs (
                scope uuid NOT NULL,
                kind "char" NOT NULL,
                day date NOT NULL,
                previous date NOT NULL,
                members bigint NOT NULL,
                PRIMARY KEY (scope, kind, day, previous)
            ) WITH (fillfactor = 70);
            -- Each active day of a multirange of days with the active day before it: the one place that rule is written.
            CREATE FUNCTION day_pairs(days datemultirange) RETURNS TABLE (day date, previous date)
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
                SELECT lower(r) + g, CASE WHEN g = 0
                    THEN COALESCE(upper(days * datemultirange(daterange(NULL, lower(r)))) - 1, '-infinity'::date)
                    ELSE lower(r) + g - 1 END
                -- Days as integers from each range's start: a series of timestamps would depend on the session's time zone.
                FROM unnest(days) AS r, generate_series(0, upper(r) - lower(r) - 1) AS g
            $$;
            INSERT INTO active_day_pairs (scope, kind, day, previous, members)
            SELECT scope, kind, day, previous, count(*) FROM (
                SELECT a.scope, 'd'::"char" AS kind, p.day, p.previous FROM device_activity a, day_pairs(a.days) p
                UNION ALL
                SELECT a.scope, 't', p.day, p.previous FROM tourist_activity a, day_pairs(a.days) p
            ) pairs
            GROUP BY scope, kind, day, previous;
            -- A tour's credited arrivals count in its hour_visits from now on (moved with the credit, as day_poi_stats' visits
            -- are), instead of being read from untoured_events by each report: those stored so far are added.
            INSERT INTO hour_visits AS h (scope, day, hour, visits)
            SELECT tour_id, (occurred_at AT TIME ZONE 'UTC')::date, extract(hour FROM occurred_at AT TIME ZONE 'UTC')::smallint, count(*)
            FROM untoured_events WHERE tour_id IS NOT NULL AND type = 'poi.arrived'
            GROUP BY 1, 2, 3
            ON CONFLICT (scope, day, hour) DO UPDATE SET visits = h.visits + EXCLUDED.visits;
            -- Rows migration 12 set aside not converted yet (IdConversion moves them after the migrations, unchanged but ids).
            DO $do$
            BEGIN
                IF to_regclass('untoured_events_unhashed') IS NOT NULL THEN
                    INSERT INTO hour_visits AS h (scope, day, hour, visits)
                    SELECT tour_id, (occurred_at AT TIME ZONE 'UTC')::date, extract(hour FROM occurred_at AT TIME ZONE 'UTC')::smallint, count(*)
                    FROM untoured_events_unhashed WHERE tour_id IS NOT NULL AND type = 'poi.arrived'
                    GROUP BY 1, 2, 3
                    ON CONFLICT (scope, day, hour) DO UPDATE SET visits = h.visits + EXCLUDED.visits;
                END IF;
                IF to_regclass('device_activity_unhashed') IS NOT NULL THEN
                    INSERT INTO active_day_pairs AS t (scope, kind, day, previous, members)
                    SELECT a.scope, 'd', p.day, p.previous, count(*) FROM device_activity_unhashed a, day_pairs(a.days) p GROUP BY 1, 3, 4
                    ON CONFLICT (scope, kind, day, previous) DO UPDATE SET members = t.members + EXCLUDED.members;
                END IF;
                IF to_regclass('tourist_activity_unhashed') IS NOT NULL THEN
                    INSERT INTO active_day_pairs AS t (scope, kind, day, previous, members)
                    SELECT a.scope, 't', p.day, p.previous, count(*) FROM tourist_activity_unhashed a, day_pairs(a.days) p GROUP BY 1, 3, 4
                    ON CONFLICT (scope, kind, day, previous) DO UPDATE SET members = t.members + EXCLUDED.members;
                END IF;
            END
            $do$;
            """),
        Migration(15, "funnel by day pairs", """
            -- A replica of the version before (12-14) may still run during a rolling deploy: it would count without keeping
            -- the tables below, and erase without taking its device's funnel_activity rows. It is fenced out first, as
            -- migration 12 fenced text writers (docs/ANALYTICS.md "Upgrading to the funnel's day pairs"). The id conversion's
            -- lock (IdConversion, per schema) first: an old replica converting holds it, and the build below must not
            -- interleave with its moves.
            SELECT pg_advisory_xact_lock(hashtext('itour.analytics.ids.' || current_schema()));
            -- Every old batch's first write is its dedupe insert naming event_id: it now fails with SQLSTATE 42703, which
            -- the ingest takes for transient and retries until the replica is replaced, losing nothing. The ACCESS EXCLUSIVE
            -- lock waits for a batch in progress, so the build below reads everything committed.
            ALTER TABLE processed_events RENAME COLUMN event_id TO id;
            -- An old replica's erasure fails (42703) instead of leaving the erased device's funnel_activity rows.
            ALTER TABLE erasures RENAME COLUMN client TO client_address;
            -- The funnel's distinct devices per tour and step over any range from O(days) rows (docs/ANALYTICS.md "Distinct
            -- counts from day pairs"), as active_day_pairs does for scopes. A step is kind 's' (started), 'c' (completed) or
            -- 'v' (arrived at the stop poi_id; the nil UUID for 's' and 'c'). funnel_activity holds each device's days per
            -- tour and step: its marks' days, its own arrivals' days (stop_visits) and its credited arrivals' days
            -- (untoured_events), so a credit moved away takes a day out only when nothing else holds it.
            CREATE TABLE funnel_activity (
                tour_id uuid NOT NULL,
                kind "char" NOT NULL,
                poi_id uuid NOT NULL,
                device_id uuid NOT NULL,
                days datemultirange NOT NULL,
                PRIMARY KEY (tour_id, kind, poi_id, device_id)
            ) WITH (fillfactor = 70);
            -- An erasure finds the device's rows by it.
            CREATE INDEX funnel_activity_by_device ON funnel_activity (device_id);
            -- Per tour and step, how many devices have day d active with previous active day p ('-infinity': none): a range's
            -- devices are the sum over f <= d <= t and p < f. An aggregate: pruning keeps it, an erasure takes its pairs out.
            CREATE TABLE funnel_day_pairs (
                tour_id uuid NOT NULL,
                kind "char" NOT NULL,
                poi_id uuid NOT NULL,
                day date NOT NULL,
                previous date NOT NULL,
                devices bigint NOT NULL,
                -- Day second: the report's scan is bounded by the tour and the range, not the tour's whole history.
                PRIMARY KEY (tour_id, day, kind, poi_id, previous)
            ) WITH (fillfactor = 70);
            INSERT INTO funnel_activity (tour_id, kind, poi_id, device_id, days)
            SELECT tour_id, kind, poi_id, device_id, range_agg(daterange(day, day, '[]')) FROM (
                SELECT tour_id, kind, '00000000-0000-0000-0000-000000000000'::uuid AS poi_id, device_id,
                       (occurred_at AT TIME ZONE 'UTC')::date AS day
                FROM tour_marks
                UNION ALL
                SELECT tour_id, 'v', poi_id, device_id, day FROM stop_visits
                UNION ALL
                SELECT tour_id, 'v', poi_id, device_id, (occurred_at AT TIME ZONE 'UTC')::date FROM untoured_events
                WHERE tour_id IS NOT NULL AND type = 'poi.arrived'
            ) steps
            GROUP BY 1, 2, 3, 4;
            DO $do$
            BEGIN
                IF to_regclass('tour_marks_unhashed') IS NOT NULL OR to_regclass('stop_visits_unhashed') IS NOT NULL
                   OR to_regclass('untoured_events_unhashed') IS NOT NULL THEN
                    -- A device's rows split between a converted table and one not converted yet could not be merged here
                    -- (the key that pairs their ids is not in the database): the previous version finishes the conversion first.
                    IF EXISTS (SELECT 1 FROM funnel_activity) THEN
                        RAISE EXCEPTION 'migration 15 needs the stored ids converted first: run the previous analytics until /ready reports ids converted';
                    END IF;
                    -- Rows not converted yet: raw ids, moved into funnel_activity by IdConversion like the tables they come from
                    -- (each of those may be converted and dropped already, so each is read only if it is there).
                    CREATE TABLE funnel_activity_unhashed (
                        tour_id uuid NOT NULL,
                        kind "char" NOT NULL,
                        poi_id uuid NOT NULL,
                        device_id text COLLATE "C" NOT NULL,
                        days datemultirange NOT NULL,
                        PRIMARY KEY (tour_id, kind, poi_id, device_id)
                    );
                    CREATE TEMPORARY TABLE funnel_steps_unhashed (tour_id uuid, kind "char", poi_id uuid, device_id text, day date) ON COMMIT DROP;
                    IF to_regclass('tour_marks_unhashed') IS NOT NULL THEN
                        EXECUTE $q$INSERT INTO funnel_steps_unhashed SELECT tour_id, kind, '00000000-0000-0000-0000-000000000000', device_id,
                                   (occurred_at AT TIME ZONE 'UTC')::date FROM tour_marks_unhashed$q$;
                    END IF;
                    IF to_regclass('stop_visits_unhashed') IS NOT NULL THEN
                        EXECUTE $q$INSERT INTO funnel_steps_unhashed SELECT tour_id, 'v', poi_id, device_id, day FROM stop_visits_unhashed$q$;
                    END IF;
                    IF to_regclass('untoured_events_unhashed') IS NOT NULL THEN
                        EXECUTE $q$INSERT INTO funnel_steps_unhashed SELECT tour_id, 'v', poi_id, device_id, (occurred_at AT TIME ZONE 'UTC')::date
                                   FROM untoured_events_unhashed WHERE tour_id IS NOT NULL AND type = 'poi.arrived'$q$;
                    END IF;
                    INSERT INTO funnel_activity_unhashed (tour_id, kind, poi_id, device_id, days)
                    SELECT tour_id, kind, poi_id, device_id, range_agg(daterange(day, day, '[]')) FROM funnel_steps_unhashed GROUP BY 1, 2, 3, 4;
                    INSERT INTO funnel_day_pairs (tour_id, kind, poi_id, day, previous, devices)
                    SELECT a.tour_id, a.kind, a.poi_id, p.day, p.previous, count(*) FROM funnel_activity_unhashed a, day_pairs(a.days) p
                    GROUP BY 1, 2, 3, 4, 5;
                END IF;
            END
            $do$;
            INSERT INTO funnel_day_pairs AS t (tour_id, kind, poi_id, day, previous, devices)
            SELECT a.tour_id, a.kind, a.poi_id, p.day, p.previous, count(*) FROM funnel_activity a, day_pairs(a.days) p
            GROUP BY 1, 2, 3, 4, 5
            ON CONFLICT (tour_id, kind, poi_id, day, previous) DO UPDATE SET devices = t.devices + EXCLUDED.devices;
            """),
        Migration(16, "distinct devices per registration by day pairs", """
            -- The devices report over any range from O(days x registrations) rows (docs/ANALYTICS.md "Distinct counts from day
            -- pairs"): migration 14's day pairs of device_activity, per scope and the registration a device has now, so a range's
            -- devices per registration are the sum of the rows with f <= day <= t and previous < f. A device's latest
            -- registration decides its bucket for all its days: when a newer one changes it, the ingest moves every pair of the
            -- device's activity rows from the old bucket to the new one. An aggregate: pruning keeps it, an erasure takes the
            -- device's pairs out.
            -- The id conversion's lock first (as migration 15): the build below must not interleave with a conversion's moves. A
            -- conversion half done between device_activity and devices (converted in that order) would put the converted
            -- devices' pairs under "never registered": refused, as migration 15 refuses its own half-converted tables.
            SELECT pg_advisory_xact_lock(hashtext('itour.analytics.ids.' || current_schema()));
            DO $do$
            BEGIN
                IF to_regclass('devices_unhashed') IS NOT NULL THEN
                    IF EXISTS (SELECT 1 FROM devices_unhashed) AND EXISTS (SELECT 1 FROM device_activity) THEN
                        RAISE EXCEPTION 'migration 16 needs the stored ids converted first: run the previous analytics until /ready reports ids converted';
                    END IF;
                END IF;
            END
            $do$;
            CREATE TABLE registrations (
                registration uuid PRIMARY KEY,
                platform text NOT NULL,
                model text NOT NULL,
                os_version text NOT NULL,
                app_version text NOT NULL
            );
            -- A registration's key, the same whichever replica computes it (no id to hand out and read back); the nil UUID is
            -- never registered. Lengths first, so no two tuples share a text.
            CREATE FUNCTION registration_key(platform text, model text, os_version text, app_version text) RETURNS uuid
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
                SELECT CASE WHEN platform IS NULL THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE md5(
                    length(platform)::text || ':' || platform || length(model)::text || ':' || model
                    || length(os_version)::text || ':' || os_version || length(app_version)::text || ':' || app_version)::uuid END
            $$;
            CREATE TABLE registration_day_pairs (
                scope uuid NOT NULL,
                day date NOT NULL,
                previous date NOT NULL,
                registration uuid NOT NULL,
                members bigint NOT NULL,
                PRIMARY KEY (scope, day, previous, registration)
            ) WITH (fillfactor = 70);
            INSERT INTO registrations (registration, platform, model, os_version, app_version)
            SELECT DISTINCT registration_key(platform, model, os_version, app_version), platform, model, os_version, app_version FROM devices;
            INSERT INTO registration_day_pairs (scope, day, previous, registration, members)
            SELECT a.scope, p.day, p.previous, registration_key(r.platform, r.model, r.os_version, r.app_version), count(*)
            FROM device_activity a LEFT JOIN devices r ON r.device_id = a.device_id, day_pairs(a.days) p
            GROUP BY 1, 2, 3, 4;
            -- Rows migration 12 set aside not converted yet (IdConversion moves them unchanged but ids): bucketed by the
            -- registration stored beside them.
            DO $do$
            BEGIN
                IF to_regclass('devices_unhashed') IS NOT NULL THEN
                    INSERT INTO registrations (registration, platform, model, os_version, app_version)
                    SELECT DISTINCT registration_key(platform, model, os_version, app_version), platform, model, os_version, app_version
                    FROM devices_unhashed
                    ON CONFLICT DO NOTHING;
                END IF;
                -- (devices_unhashed is converted after device_activity_unhashed, so it is there whenever that one is.)
                IF to_regclass('device_activity_unhashed') IS NOT NULL THEN
                    INSERT INTO registration_day_pairs AS t (scope, day, previous, registration, members)
                    SELECT a.scope, p.day, p.previous, registration_key(r.platform, r.model, r.os_version, r.app_version), count(*)
                    FROM device_activity_unhashed a LEFT JOIN devices_unhashed r ON r.device_id = a.device_id, day_pairs(a.days) p
                    GROUP BY 1, 2, 3, 4
                    ON CONFLICT (scope, day, previous, registration) DO UPDATE SET members = t.members + EXCLUDED.members;
                END IF;
            END
            $do$;
            """),
    ]

    static let runner = MigrationRunner(schema: AnalyticsSchema.live.name, migrations: all)
}

/// The schema the analytics tables live in: `analytics`, or a fresh one a replay builds before it is
/// swapped in. Schema names cannot be bound as parameters, so only plain identifiers are allowed.
struct AnalyticsSchema: Sendable, Equatable {
    let name: String

    static let live = AnalyticsSchema(checked: "analytics")
    /// Where `analytics replay` builds by default.
    static let replay = AnalyticsSchema(checked: "analytics_replay")
    /// Taken shared by every ingest batch and exclusively by `replay --activate`.
    static let ingestLockKey = "itour.analytics.ingest"

    /// Lowercase ASCII letters and underscores, as MigrationRunner requires.
    init?(_ name: String) {
        guard (1...63).contains(name.utf8.count), name.utf8.first != UInt8(ascii: "_"),
              name.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "_") }) else { return nil }
        self.name = name
    }

    private init(checked name: String) { self.name = name }

    var migrations: MigrationRunner { MigrationRunner(schema: name, migrations: AnalyticsMigrations.all) }
}
