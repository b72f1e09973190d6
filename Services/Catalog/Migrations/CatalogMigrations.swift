import Shared

/// The `catalog` schema, in order. Applied by `MigrationRunner` at start-up; never edit a shipped one.
enum CatalogMigrations {
    static let runner = MigrationRunner(schema: "catalog", migrations: [
        Migration(1, "tours, pois, stops, outbox, processed commands, audit log", """
            CREATE TABLE tours (
                id uuid PRIMARY KEY,
                version integer NOT NULL,
                status text NOT NULL CHECK (status IN ('draft', 'published', 'archived')),
                name text NOT NULL,
                content jsonb NOT NULL,
                updated_at timestamptz NOT NULL,
                deleted_at timestamptz
            );
            CREATE TABLE pois (
                id uuid PRIMARY KEY,
                version integer NOT NULL,
                name text NOT NULL,
                content jsonb NOT NULL,
                updated_at timestamptz NOT NULL,
                deleted_at timestamptz
            );
            CREATE TABLE tour_stops (
                tour_id uuid NOT NULL REFERENCES tours (id),
                position integer NOT NULL,
                poi_id uuid NOT NULL REFERENCES pois (id),
                PRIMARY KEY (tour_id, position)
            );
            CREATE INDEX tour_stops_poi ON tour_stops (poi_id);
            -- Transactional outbox: written with the change, published by the relay, then deleted.
            CREATE TABLE outbox (
                id bigserial PRIMARY KEY,
                topic text NOT NULL,
                key text,
                partition integer,
                payload text NOT NULL,
                request_id text,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            -- At-most-once application: a command id seen before is not applied again.
            CREATE TABLE processed_commands (
                command_id uuid PRIMARY KEY,
                outcome text NOT NULL,
                result jsonb NOT NULL,
                processed_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE audit_log (
                id bigserial PRIMARY KEY,
                command_id uuid NOT NULL,
                actor text NOT NULL,
                action text NOT NULL,
                entity_id uuid,
                before jsonb,
                after jsonb,
                at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX audit_log_entity ON audit_log (entity_id, id);
            """),
        Migration(2, "category tree", """
            -- A POI's content.category is the path of one of these (e.g. 'Shop/Fashion').
            CREATE TABLE categories (
                id uuid PRIMARY KEY,
                version integer NOT NULL,
                name text NOT NULL,
                parent_id uuid REFERENCES categories (id),
                path text NOT NULL,
                updated_at timestamptz NOT NULL,
                deleted_at timestamptz
            );
            -- Sibling names are unique regardless of case, so a path names one category.
            CREATE UNIQUE INDEX categories_live_path ON categories (lower(path)) WHERE deleted_at IS NULL;
            CREATE INDEX pois_category ON pois ((content->>'category')) WHERE deleted_at IS NULL;
            """),
        Migration(3, "outbox payloads stored uncompressed", """
            -- A snapshot writes a city's JSON through the outbox and the relay reads it straight back:
            -- compressing it on the way in and out cost more than the space it saved for so short a stay.
            ALTER TABLE outbox ALTER COLUMN payload SET STORAGE EXTERNAL;
            """),
        Migration(4, "drafts", """
            -- Changes to published content waiting for Publish (DESIGN.md, "Drafts and publishing"): a tour's
            -- {content, stops}, a POI's content. NULL: none.
            ALTER TABLE tours ADD COLUMN draft jsonb;
            ALTER TABLE pois ADD COLUMN draft jsonb;
            """),
        Migration(5, "scheduled publishing", """
            -- A tour's schedule (DESIGN.md, "Scheduled publishing"), and when the scheduler is to act on it:
            -- NULL once applied, cancelled or failed, so the scheduler's query reads only pending ones.
            ALTER TABLE tours ADD COLUMN schedule jsonb, ADD COLUMN schedule_due timestamptz;
            CREATE INDEX tours_schedule_due ON tours (schedule_due) WHERE schedule_due IS NOT NULL;
            """),
        Migration(6, "places on their own", """
            -- A POI's own status (DESIGN.md, "Places on their own"): published POIs are on the feed without a tour.
            ALTER TABLE pois ADD COLUMN status text NOT NULL DEFAULT 'draft';
            """),
        Migration(7, "calendar", """
            -- Calendar entries (DESIGN.md, "Calendar"): their content as CalendarEntryContent's JSON.
            CREATE TABLE calendar_entries (
                id uuid PRIMARY KEY,
                version integer NOT NULL,
                status text NOT NULL,
                content jsonb NOT NULL,
                updated_at timestamptz NOT NULL,
                deleted_at timestamptz
            );
            """),
        Migration(8, "people", """
            -- The people directory (DESIGN.md, "People"): each entry's content as PersonContent's JSON, in a catalog
            -- record's table (DESIGN.md, "Catalog records"), as calendar entries are.
            CREATE TABLE people (LIKE calendar_entries INCLUDING ALL);
            """),
        Migration(9, "pages", """
            -- Content pages (DESIGN.md, "Pages"), catalog records like calendar entries; one live page per address.
            CREATE TABLE pages (LIKE calendar_entries INCLUDING ALL);
            CREATE UNIQUE INDEX pages_live_slug ON pages ((content->>'slug')) WHERE deleted_at IS NULL;
            """),
        Migration(10, "featured items", """
            -- The home screen's featured items (DESIGN.md, "Featured"), catalog records like calendar entries.
            CREATE TABLE featured_items (LIKE calendar_entries INCLUDING ALL);
            """),
        Migration(11, "media items", """
            -- The media library's items (DESIGN.md, "Media library"), catalog records like calendar entries; their
            -- bytes are in the media store.
            CREATE TABLE media_items (LIKE calendar_entries INCLUDING ALL);
            """),
        Migration(12, "tour stops checked by catalog, not by foreign keys", """
            -- The command that writes a tour's stops has checked each is a live POI, reading it FOR SHARE (livePoiIds,
            -- the check that names a missing stop), and writes the tour's row with them; no tour or POI row is ever
            -- deleted (a delete is a tombstone). So the keys could fail only where those checks already had; each was
            -- a query per stop row, most of an import's tours (docs/BENCHMARKS.md, Catalog's import).
            ALTER TABLE tour_stops DROP CONSTRAINT IF EXISTS tour_stops_tour_id_fkey;
            ALTER TABLE tour_stops DROP CONSTRAINT IF EXISTS tour_stops_poi_id_fkey;
            """),
        Migration(13, "audit states and command results stored as written", """
            -- Both are stored and read back whole (history, a repeated command's answer); only a revert looks inside, at
            -- one entity's rows (after::jsonb->>'version'). Parsing each into jsonb on the way in was about half of an audit
            -- row's cost in an import (docs/BENCHMARKS.md, Catalog's import). The ALTER rewrites the audit log once, at this migration.
            ALTER TABLE audit_log ALTER COLUMN before TYPE text USING before::text, ALTER COLUMN after TYPE text USING after::text;
            ALTER TABLE processed_commands ALTER COLUMN result TYPE text USING result::text;
            """),
        Migration(14, "POI content stored as written; each POI's position in columns", """
            -- A POI's content and draft are stored and read back whole; parsing each into jsonb on the way in was about
            -- half of a POI row's cost in an import, and the index on content->>'category' a fifth, read by no query
            -- (docs/BENCHMARKS.md, Catalog's import). The content's position gets columns beside its name: publishing a tour reads them for each
            -- stop (a stop with a draft is read from the draft). A category rename's scan casts content::jsonb.
            ALTER TABLE pois ADD COLUMN latitude double precision, ADD COLUMN longitude double precision;
            UPDATE pois SET latitude = (content->>'latitude')::float8, longitude = (content->>'longitude')::float8;
            ALTER TABLE pois ALTER COLUMN latitude SET NOT NULL, ALTER COLUMN longitude SET NOT NULL;
            DROP INDEX pois_category;
            ALTER TABLE pois ALTER COLUMN content TYPE text USING content::text, ALTER COLUMN draft TYPE text USING draft::text;
            """),
        Migration(15, "recently deleted tours and POIs", """
            -- catalog.recently-deleted reads the deletes newest first; imports leave the audit log long, deletes are few.
            CREATE INDEX audit_log_deletes ON audit_log (id) WHERE after IS NULL AND action IN ('tour.delete', 'poi.delete');
            """),
        Migration(16, "category names in other languages", """
            -- Language → {"name": text} as JSON (DESIGN.md "Languages"); NULL when the name is in the site language only.
            ALTER TABLE categories ADD COLUMN translations text;
            """),
    ])
}
