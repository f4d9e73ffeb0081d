/**
 * The environment that points a CLI child (`serve`, `ingest`...) at database `db`: its contact
 * points, CQL port and local datacenter, as `SCYLLA_LOADER_*` settings.
 */
export function dbEnv(db: {
  contactPoints: readonly string[];
  port: number;
  localDataCenter: string;
}): Record<string, string> {
  return {
    SCYLLA_LOADER_CONTACT_POINTS: db.contactPoints.join(','),
    SCYLLA_LOADER_CQL_PORT: String(db.port),
    SCYLLA_LOADER_LOCAL_DC: db.localDataCenter,
  };
}
