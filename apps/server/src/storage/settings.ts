import type { Queryable } from '../platform/postgres.js';

export async function getSetting(db: Queryable, key: string): Promise<string | undefined> {
  const result = await db.query<{ value: string }>('SELECT value FROM hearth_setting WHERE key = $1', [key]);
  return result.rows[0]?.value;
}

/** Sets a value unless one is already there; returns the value that holds (first writer wins). */
export async function setSettingOnce(db: Queryable, key: string, value: string): Promise<string> {
  await db.query('INSERT INTO hearth_setting (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value]);
  return (await getSetting(db, key)) as string;
}
