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
    ])
}
