import pg from 'pg';
import { signIn } from './auth.js';
import { BenchClient } from './http.js';
import { startServer } from './server.js';

/**
 * `npm run bench -- --only wal`: the WAL one create and one update of a Patient write, counted
 * exactly rather than timed (so a busy machine does not move it). Starts the built server on its own
 * embedded PostgreSQL (nothing else writes there), creates and updates Patients shaped as the FHIR
 * load harness's (W1, and W3's change: a new phone, address line and `active`) from one client,
 * and reads the LSN and `pg_stat_wal` around each measured batch, after a warm-up that takes the
 * full-page images of the checkpoint before it. Autovacuum is off on that cluster meanwhile, so
 * its passes are not counted. With DATABASE_URL (a fresh database on a cluster of your own, for
 * pg_waldump by relation over the LSN ranges it prints) nothing is changed on the cluster.
 */
export async function measureWal(admin: { email: string; password: string }, log: (line: string) => void) {
  log('wal: starting the server on a private embedded PostgreSQL...');
  // Hearth's own ANALYZE of grown tables would land in the measured window: off here.
  const server = await startServer(admin, { label: 'wal', env: { HEARTH_AUTO_ANALYZE: 'false' } });
  const client = new BenchClient(`${server.baseUrl}fhir/R4`, 1);
  const db = new pg.Client({ connectionString: server.databaseUrl });
  try {
    client.headers = await signIn(server.baseUrl, admin.email, admin.password);
    await db.connect();
    let n = 0;
    const ids: string[] = [];
    const create = async () => {
      const text = await client.expect(201, 'POST', '/Patient', patient(ids.length));
      return (JSON.parse(text) as { id: string }).id;
    };
    // As the harness's W3: the created content with a new phone, address line and `active`.
    const update = async (i: number) => {
      const body = patient(i) as { telecom: { value: string }[]; address: { line: string[] }[]; active: boolean };
      n++;
      body.telecom[0].value = `555-${String(n % 1000).padStart(3, '0')}-${String((n * 31) % 10000).padStart(4, '0')}`;
      body.address[0].line = [`${n % 9999} ${STREETS[n % STREETS.length]} Extension`];
      body.active = n % 2 === 0;
      await client.expect(200, 'PUT', `/Patient/${ids[i]}`, { ...body, id: ids[i] });
    };
    if (!process.env.DATABASE_URL) {
      // Only the writes' own WAL: no autovacuum passes in the window (this cluster is the benchmark's own).
      await db.query('ALTER SYSTEM SET autovacuum = off');
      await db.query('SELECT pg_reload_conf()');
    }
    await db.query('CHECKPOINT');
    for (let i = 0; i < 300; i++) ids.push(await create());
    for (let i = 0; i < ids.length; i++) await update(i);
    const count = 200;
    const created = await walOf(db, async () => {
      for (let i = 0; i < count; i++) ids.push(await create());
    });
    const updated = await walOf(db, async () => {
      for (let i = 0; i < count; i++) await update(i);
    });
    const row = (name: string, w: Wal) =>
      `${name.padEnd(8)} ${(w.bytes / count).toFixed(0).padStart(8)} B ${(w.records / count).toFixed(1).padStart(7)} records ${(w.fpi / count).toFixed(2).padStart(6)} FPI`;
    process.stdout.write(
      `\nWAL per write (${count} writes each, one client, after 300 creates and 300 updates of warm-up):\n` +
        `${row('create', created)}\n${row('update', updated)}\n` +
        `LSN ranges (pg_waldump -s START -e END): create ${created.start}..${created.end}, update ${updated.start}..${updated.end}\n`,
    );
  } finally {
    await db.end().catch(() => undefined);
    await client.close();
    await server.stop();
  }
}

interface Wal {
  start: string;
  end: string;
  bytes: number;
  records: number;
  fpi: number;
}

async function walOf(db: pg.Client, run: () => Promise<void>): Promise<Wal> {
  // Backends report their WAL counters to pg_stat_wal up to a second late: settle before reading them.
  const settle = () => new Promise((r) => setTimeout(r, 1500));
  const stats = async () =>
    (await db.query<{ records: string; fpi: string }>('SELECT wal_records AS records, wal_fpi AS fpi FROM pg_stat_wal'))
      .rows[0];
  const lsn = async () => (await db.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn() AS lsn')).rows[0].lsn;
  await settle();
  const before = { ...(await stats()), lsn: await lsn() };
  await run();
  const endLsn = await lsn();
  await settle();
  const after = { ...(await stats()), lsn: endLsn };
  const bytes = await db.query<{ d: string }>('SELECT pg_wal_lsn_diff($1, $2) AS d', [after.lsn, before.lsn]);
  return {
    start: before.lsn,
    end: after.lsn,
    bytes: Number(bytes.rows[0].d),
    records: Number(after.records) - Number(before.records),
    fpi: Number(after.fpi) - Number(before.fpi),
  };
}

const FAMILIES = ['Kowalczyk', 'Okonkwo', 'Lindqvist', 'Tanaka', 'Fernandes', 'Haddad'];
const GIVEN = ['Amara', 'Bodhi', 'Calla', 'Dorian', 'Elif', 'Fintan'];
const STREETS = ['Elm Street', 'Harbor Road', 'Maple Avenue', 'Pine Lane'];

/** A Patient of the harness's shape (two identifiers, name, phone and email, address, ...). */
function patient(i: number): Record<string, unknown> {
  const family = FAMILIES[i % FAMILIES.length];
  const given = GIVEN[(i * 7) % GIVEN.length];
  const digits = (len: number) => String((i * 7919 + len * 104729) % 10 ** len).padStart(len, '0');
  return {
    resourceType: 'Patient',
    identifier: [
      {
        use: 'usual',
        type: {
          coding: [
            { system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'MR', display: 'Medical Record Number' },
          ],
        },
        system: 'http://hospital.example.org/fhir/mrn',
        value: `MRN-${digits(8)}`,
      },
      { system: 'http://hl7.org/fhir/sid/us-ssn', value: `999-${digits(2)}-${digits(4)}` },
    ],
    active: i % 10 !== 0,
    name: [{ use: 'official', family, given: i % 3 ? [given] : [given, GIVEN[i % GIVEN.length]], prefix: ['Ms.'] }],
    telecom: [
      { system: 'phone', value: `555-${digits(3)}-${digits(4)}`, use: 'home' },
      { system: 'email', value: `${given.toLowerCase()}.${family.toLowerCase()}@example.com`, use: 'home' },
    ],
    gender: 'female',
    birthDate: '1970-04-12',
    address: [
      {
        use: 'home',
        line: [`${(i % 9999) + 1} ${STREETS[i % STREETS.length]}`],
        city: 'Providence',
        state: 'RI',
        postalCode: '02903',
        country: 'US',
      },
    ],
    maritalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-MaritalStatus', code: 'M' }] },
    communication: [
      { language: { coding: [{ system: 'urn:ietf:bcp:47', code: 'en-US', display: 'English (United States)' }] } },
    ],
  };
}
