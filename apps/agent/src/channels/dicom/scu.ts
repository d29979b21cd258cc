// The storage SCU: sends one Part 10 instance to a remote AE (a PACS) with C-STORE and returns the
// remote's status.
import { CStoreRequest, Client, Dataset, Status, TransferSyntax, type CStoreResponse } from './dimse.js';
import { readPart10 } from './part10.js';

export interface DicomDestination {
  aeTitle: string;
  host: string;
  port: number;
}

/** An AE title: 1-16 characters, no backslash or control characters, not only spaces (PS3.5 §6.2). */
export function isAeTitle(title: string): boolean {
  return title.trim() !== '' && title.length <= 16 && [...title].every((c) => c >= ' ' && c !== '\\' && c !== '\x7f');
}

/** Parses `AE@host:port`. */
export function parseDicomDestination(destination: string): DicomDestination {
  const match = /^([^@]+)@(?:\[([^\]]+)\]|([^:@]+)):(\d{1,5})$/.exec(destination.trim());
  const port = match ? Number(match[4]) : NaN;
  if (!match || port < 1 || port > 65535 || !isAeTitle(match[1]))
    throw new Error(`'${destination}' is not AE@host:port`);
  return { aeTitle: match[1].trim(), host: match[2] ?? match[3], port };
}

export interface StoreResult {
  status: number;
  errorComment?: string;
}

const uncompressed = new Set<string>([
  TransferSyntax.ImplicitVRLittleEndian,
  TransferSyntax.ExplicitVRLittleEndian,
  TransferSyntax.ExplicitVRBigEndian,
]);

/** Status classes of PS3.7 Annex C: success, warning (0001, Bxxx), anything else a failure. */
export function isStoreSuccess(status: number): boolean {
  return status === Status.Success || status === 0x0001 || (status >= 0xb000 && status <= 0xbfff);
}

export function cStore(
  destination: DicomDestination,
  part10: Uint8Array,
  callingAeTitle: string,
  timeoutMs: number,
): Promise<StoreResult> {
  const { transferSyntaxUid, elements } = readPart10(part10);
  const request = new CStoreRequest(new Dataset(elements, transferSyntaxUid));
  // An uncompressed instance may go in any uncompressed syntax the remote prefers (the library transcodes those).
  if (uncompressed.has(transferSyntaxUid))
    request.setAdditionalTransferSyntaxes([...uncompressed].filter((ts) => ts !== transferSyntaxUid));
  const client = new Client();
  client.addRequest(request);
  const where = `${destination.aeTitle}@${destination.host}:${destination.port}`;
  return new Promise<StoreResult>((resolve, reject) => {
    let result: StoreResult | undefined;
    let settled = false;
    const settle = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else if (result) resolve(result);
      else
        reject(
          new Error(
            `${where} answered no C-STORE: it accepted no presentation context for SOP class ${String(elements.SOPClassUID)}`,
          ),
        );
    };
    const timer = setTimeout(() => {
      client.abort();
      settle(new Error(`C-STORE to ${where}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    request.on('response', (response: InstanceType<typeof CStoreResponse>) => {
      result = { status: response.getStatus(), errorComment: response.getErrorComment() || undefined };
    });
    client.on('associationRejected', (reject: { result?: number; source?: number; reason?: number } | undefined) => {
      settle(new Error(`${where} refused the association (reason ${reject?.reason ?? 'not given'})`));
    });
    client.on('networkError', (error: Error) => settle(new Error(`C-STORE to ${where}: ${error.message}`)));
    client.on('closed', () => settle());
    client.send(destination.host, destination.port, callingAeTitle, destination.aeTitle, {
      connectTimeout: timeoutMs,
      associationTimeout: timeoutMs,
      pduTimeout: timeoutMs,
    });
  });
}
