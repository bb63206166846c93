import pg from "pg";

/**
 * Makes blob `digest` of the database at `url` look last stored `ageMs` ago (tests of garbage
 * collection in other packages, which do not resolve `pg` themselves).
 */
export async function ageBlob(url: string, digest: string, ageMs: number, schema = "public"): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await pool.query(
      `UPDATE "${schema}".podkit_blobs SET last_put_at = now() - make_interval(secs => $2::float8 / 1000) WHERE digest = $1`,
      [digest, ageMs],
    );
  } finally {
    await pool.end();
  }
}
