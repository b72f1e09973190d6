import Shared

/// The `admin` schema, in order. Never edit a shipped migration; add one.
enum AdminMigrations {
    static let runner = MigrationRunner(schema: "admin", migrations: [
        Migration(1, "users and sessions", """
            CREATE TABLE users (
                id uuid PRIMARY KEY,
                email text NOT NULL UNIQUE,
                password_hash text NOT NULL,
                role text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE sessions (
                token_hash text PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                csrf_token text NOT NULL,
                expires_at timestamptz NOT NULL
            );
            """),
        Migration(2, "tour editors, login throttling, import jobs", """
            -- Emails are compared without regard to case.
            CREATE UNIQUE INDEX users_email_lower ON users (lower(email));
            ALTER TABLE sessions ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();
            CREATE INDEX sessions_user ON sessions (user_id);
            -- Which editors may edit which tour (tours live in catalog; their ids are catalog's).
            CREATE TABLE tour_editors (
                tour_id uuid NOT NULL,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                assigned_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tour_id, user_id)
            );
            CREATE INDEX tour_editors_user ON tour_editors (user_id);
            -- Failed log-ins per account ('email:...') and per client address ('ip:...').
            CREATE TABLE login_failures (
                key text PRIMARY KEY,
                failures integer NOT NULL,
                last_failure_at timestamptz NOT NULL,
                locked_until timestamptz
            );
            -- Bulk imports: the page polls the job's phase and, at the end, shows its per-row report.
            CREATE TABLE import_jobs (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                file_name text NOT NULL,
                skip_bad_rows boolean NOT NULL,
                phase text NOT NULL,
                total_rows integer NOT NULL DEFAULT 0,
                message text,
                report jsonb,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            """),
        Migration(3, "import job leases", """
            -- Issue 44: an import belongs to the admin process running it (owner: host name and a random id made at
            -- its start), which pushes lease_expires_at forward while the import runs. Any admin fails an unfinished
            -- import only once its lease has expired, so one replica's start no longer fails another's imports.
            -- Rows without a lease (made before this, or by an admin of the previous version during a rolling
            -- upgrade) count as leased until a while after their last change (PostgresAdminRepository).
            ALTER TABLE import_jobs ADD COLUMN owner text, ADD COLUMN lease_expires_at timestamptz;
            -- The few unfinished rows: what the heartbeat renews (by owner) and the sweep reads.
            CREATE INDEX import_jobs_unfinished ON import_jobs (owner) WHERE phase NOT IN ('done', 'failed');
            """),
    ])
}
