import type { PoolClient } from '../../platform/postgres.js';

/** One schema change, applied once and in `id` order by the runner. */
export interface Migration {
  /** Ordering key. Ranges by capability keep parallel work from colliding: 1-99 storage, 100-199 search, 200-299 auth, 300-399 jobs/bots/subscriptions, 400-499 terminology, 500-599 graphql/other, 600-699 audit, 700-799 analytics. */
  id: number;
  name: string;
  up(client: PoolClient): Promise<void>;
}
