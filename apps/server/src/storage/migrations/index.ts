import { m0001CoreStorage } from './0001-core-storage.js';
import { m0002UniqueIds } from './0002-unique-ids.js';
import { m0003BinaryContent } from './0003-binary-content.js';
import { m0100SearchIndex } from './0100-search-index.js';
import { m0101SearchContained } from './0101-search-contained.js';
import { m0103SearchAutovacuum } from './0103-search-autovacuum.js';
import { m0102SearchTokenSortDates } from './0102-search-token-sort-dates.js';
import { m0104SearchStringTexts } from './0104-search-string-texts.js';
import { m0105SearchTokenStatistics } from './0105-search-token-statistics.js';
import { m0120SearchQuantityBaseUnits } from './0120-search-quantity-base-units.js';
import { m0200AuthLookups } from './0200-auth-lookups.js';
import { m0300JobQueue } from './0300-job-queue.js';
import { m0301ListenerHeartbeat } from './0301-listener-heartbeat.js';
import { m0302WebsocketPresence } from './0302-websocket-presence.js';
import { m0201PlatformUniqueIds } from './0201-platform-unique-ids.js';
import { m0202PlatformIdsByKey } from './0202-platform-ids-by-key.js';
import { m0310AgentHub } from './0310-agent-hub.js';
import { m0400Terminology } from './0400-terminology.js';
import { m0600AuditTrail } from './0600-audit-trail.js';
import { m0601AuditPartialIndexes } from './0601-audit-partial-indexes.js';
import { m0602AuditStatistics } from './0602-audit-statistics.js';
import { m0720Fhircast } from './0720-fhircast.js';
import { m0700Analytics } from './0700-analytics.js';
import type { Migration } from './types.js';

/** The one list of migrations, in order. */
export const migrations: Migration[] = [
  m0001CoreStorage,
  m0002UniqueIds,
  m0003BinaryContent,
  m0100SearchIndex,
  m0101SearchContained,
  m0102SearchTokenSortDates,
  m0103SearchAutovacuum,
  m0104SearchStringTexts,
  m0105SearchTokenStatistics,
  m0120SearchQuantityBaseUnits,
  m0200AuthLookups,
  m0201PlatformUniqueIds,
  m0202PlatformIdsByKey,
  m0300JobQueue,
  m0301ListenerHeartbeat,
  m0302WebsocketPresence,
  m0310AgentHub,
  m0400Terminology,
  m0600AuditTrail,
  m0601AuditPartialIndexes,
  m0602AuditStatistics,
  m0720Fhircast,
  m0700Analytics,
];
