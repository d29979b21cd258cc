import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Channel, ChannelContext, ChannelMessage } from '../types.js';
import { createDicomChannel } from './channel.js';
import {
  CEchoRequest,
  CStoreRequest,
  CStoreResponse,
  Client,
  Dataset,
  PresentationContextResult,
  Scp,
  Status,
  type Association,
} from './dimse.js';
import { readPart10 } from './part10.js';
import { syntheticInstance } from './synthetic.test-util.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});
const workDir = mkdtempSync(join(tmpdir(), 'hearth-dicom-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

interface Started {
  channel: Channel & { port?: number };
  delivered: ChannelMessage[];
  problems: string[];
  port: number;
}

async function startChannel(options: { settings?: Record<string, string>; fail?: string } = {}): Promise<Started> {
  const delivered: ChannelMessage[] = [];
  const problems: string[] = [];
  const context: ChannelContext = {
    name: 'imaging',
    address: new URL('dicom://127.0.0.1:0'),
    settings: { aeTitle: 'HEARTH', ...options.settings },
    deliver: async (message) => {
      if (options.fail) throw new Error(options.fail);
      delivered.push(message);
      return undefined;
    },
    log: { info: () => {}, warn: (m) => problems.push(m), error: (m) => problems.push(m) },
  };
  const channel = createDicomChannel(context) as Channel & { port?: number };
  await channel.start();
  cleanup.push(() => channel.stop());
  return { channel, delivered, problems, port: channel.port! };
}

/** Runs requests with dcmjs-dimse's own SCU; resolves with each response's status, or the rejection. */
function libraryScu(
  port: number,
  calledAe: string,
  requests: InstanceType<typeof CEchoRequest | typeof CStoreRequest>[],
): Promise<{ statuses: number[]; rejected: boolean }> {
  const client = new Client();
  const statuses: number[] = [];
  let rejected = false;
  for (const request of requests) {
    request.on('response', (response: InstanceType<typeof CStoreResponse>) => statuses.push(response.getStatus()));
    client.addRequest(request);
  }
  return new Promise((resolve, reject) => {
    client.on('associationRejected', () => (rejected = true));
    client.on('networkError', reject);
    client.on('closed', () => resolve({ statuses, rejected }));
    client.send('127.0.0.1', port, 'MODALITY', calledAe);
  });
}

function run(command: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const dcmtk = spawnSync('echoscu', ['--version']).status === 0;

describe('DICOM channel: storage SCP', () => {
  it('answers C-ECHO', async () => {
    const { port } = await startChannel();
    expect(await libraryScu(port, 'HEARTH', [new CEchoRequest()])).toEqual({
      statuses: [Status.Success],
      rejected: false,
    });
  });

  it('delivers each C-STORE instance as a base64 Part 10 file with the data set as sent, then answers success', async () => {
    const { port, delivered } = await startChannel();
    const a = syntheticInstance({ patientId: 'MRN-7', modality: 'CT', sopClassUid: '1.2.840.10008.5.1.4.1.1.2' });
    const b = syntheticInstance({ studyUid: String(a.elements.StudyInstanceUID), instanceNumber: 2 });
    const requests = [a, b].map(({ elements }) => new CStoreRequest(new Dataset(elements, '1.2.840.10008.1.2.1')));
    expect(await libraryScu(port, 'HEARTH', requests)).toEqual({
      statuses: [Status.Success, Status.Success],
      rejected: false,
    });
    expect(delivered).toHaveLength(2);
    expect(delivered[0].contentType).toBe('application/dicom');
    expect(delivered[0].remote).toMatch(/^127\.0\.0\.1:\d+$/);
    const first = readPart10(Buffer.from(delivered[0].body, 'base64'));
    expect(first.elements.SOPInstanceUID).toBe(a.elements.SOPInstanceUID);
    expect(first.elements.PatientID).toBe('MRN-7');
    expect(first.elements.Modality).toBe('CT');
    expect(new Uint8Array((first.elements.PixelData as ArrayBuffer[])[0])).toEqual(new Uint8Array([0, 64, 128, 255]));
    expect(readPart10(Buffer.from(delivered[1].body, 'base64')).elements.InstanceNumber).toBe(2);
  });

  it('answers 0110 (processing failure) when the instance could not be delivered, so the modality keeps it', async () => {
    const { port, problems } = await startChannel({ fail: 'server unreachable' });
    const { elements } = syntheticInstance();
    expect(
      (await libraryScu(port, 'HEARTH', [new CStoreRequest(new Dataset(elements, '1.2.840.10008.1.2.1'))])).statuses,
    ).toEqual([Status.ProcessingFailure]);
    expect(problems.some((p) => p.includes('server unreachable'))).toBe(true);
  });

  it('refuses an association called for another AE title, or from a calling AE title not on its list', async () => {
    const { port } = await startChannel();
    expect(await libraryScu(port, 'OTHER', [new CEchoRequest()])).toEqual({ statuses: [], rejected: true });
    const listed = await startChannel({ settings: { callingAeTitles: 'CT1, MR2' } });
    expect(await libraryScu(listed.port, 'HEARTH', [new CEchoRequest()])).toEqual({ statuses: [], rejected: true });
  });

  it.skipIf(!dcmtk)("works with DCMTK's echoscu and storescu", async () => {
    const { port, delivered } = await startChannel();
    // The tools run as child processes while this process's event loop serves them.
    const echo = await run('echoscu', ['-aec', 'HEARTH', '-aet', 'DCMTK', '127.0.0.1', String(port)]);
    expect(echo.code, echo.stderr).toBe(0);
    const { file, elements } = syntheticInstance({ modality: 'MR' });
    const path = join(workDir, 'instance.dcm');
    writeFileSync(path, file);
    const store = await run('storescu', ['-aec', 'HEARTH', '-aet', 'DCMTK', '127.0.0.1', String(port), path]);
    expect(store.code, store.stderr).toBe(0);
    expect(delivered).toHaveLength(1);
    expect(readPart10(Buffer.from(delivered[0].body, 'base64')).elements.SOPInstanceUID).toBe(elements.SOPInstanceUID);
    // The file the channel built around the received data set is a Part 10 file to DCMTK too.
    const received = join(workDir, 'received.dcm');
    writeFileSync(received, Buffer.from(delivered[0].body, 'base64'));
    const dump = spawnSync('dcmdump', ['+P', 'SOPInstanceUID', '+P', 'TransferSyntaxUID', received], {
      encoding: 'utf8',
    });
    expect(dump.status, dump.stderr).toBe(0);
    expect(dump.stdout).toContain(String(elements.SOPInstanceUID));
  });
});

describe('DICOM channel: push (storage SCU)', () => {
  /** dcmjs-dimse's own SCP as the PACS: accepts everything, keeps what it receives. */
  async function libraryPacs(status = Status.Success): Promise<{ port: number; received: Record<string, unknown>[] }> {
    const received: Record<string, unknown>[] = [];
    class Pacs extends Scp {
      override associationRequested(association: Association): void {
        for (const { id } of association.getPresentationContexts()) {
          const context = association.getPresentationContext(id);
          context.setResult(PresentationContextResult.Accept, context.getTransferSyntaxUids()[0]);
        }
        this.sendAssociationAccept();
      }
      override associationReleaseRequested(): void {
        this.sendAssociationReleaseResponse();
      }
      override cStoreRequest(
        request: InstanceType<typeof CStoreRequest>,
        callback: (r: InstanceType<typeof CStoreResponse>) => void,
      ): void {
        received.push(request.getDataset()!.getElements());
        const response = CStoreResponse.fromRequest(request);
        response.setStatus(status);
        callback(response);
      }
    }
    const server = net.createServer((socket) => new Pacs(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return { port: (server.address() as net.AddressInfo).port, received };
  }
  const dicomMessage = (file: Buffer): ChannelMessage => ({
    contentType: 'application/dicom',
    body: file.toString('base64'),
    remote: '',
  });

  it("sends a Part 10 instance with C-STORE and returns the remote's status", async () => {
    const { channel } = await startChannel();
    const pacs = await libraryPacs();
    const { file, elements } = syntheticInstance({ patientId: 'MRN-9' });
    const answer = await channel.push(`PACS@127.0.0.1:${pacs.port}`, dicomMessage(file), 10_000);
    expect(answer).toEqual({
      contentType: 'application/json',
      body: JSON.stringify({ status: '0000' }),
      remote: `PACS@127.0.0.1:${pacs.port}`,
    });
    expect(pacs.received).toHaveLength(1);
    expect(pacs.received[0].SOPInstanceUID).toBe(elements.SOPInstanceUID);
    expect(pacs.received[0].PatientID).toBe('MRN-9');
  });

  it("fails with the remote's failure status, and on a refused association, a bad destination or no listener", async () => {
    const { channel } = await startChannel();
    const { file } = syntheticInstance();
    const refusing = await libraryPacs(0xa700);
    await expect(channel.push(`PACS@127.0.0.1:${refusing.port}`, dicomMessage(file), 10_000)).rejects.toThrow(
      /status A700/,
    );
    const other = await startChannel({ settings: { aeTitle: 'ARCHIVE' } });
    await expect(channel.push(`PACS@127.0.0.1:${other.port}`, dicomMessage(file), 10_000)).rejects.toThrow(
      /refused the association/,
    );
    await expect(channel.push('127.0.0.1:104', dicomMessage(file), 1_000)).rejects.toThrow(/not AE@host:port/);
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(channel.push(`PACS@127.0.0.1:${closedPort}`, dicomMessage(file), 5_000)).rejects.toThrow(
      /ECONNREFUSED/,
    );
    await expect(
      channel.push(
        `PACS@127.0.0.1:${refusing.port}`,
        { ...dicomMessage(file), body: Buffer.from('not dicom').toString('base64') },
        5_000,
      ),
    ).rejects.toThrow(/DICOM/);
  });

  it('pushes from one Hearth agent to another: the receiving channel delivers the same instance', async () => {
    const sender = await startChannel({ settings: { aeTitle: 'SENDER' } });
    const receiver = await startChannel({ settings: { aeTitle: 'ARCHIVE', callingAeTitles: 'SENDER' } });
    const { file, elements } = syntheticInstance();
    await sender.channel.push(`ARCHIVE@127.0.0.1:${receiver.port}`, dicomMessage(file), 10_000);
    expect(readPart10(Buffer.from(receiver.delivered[0].body, 'base64')).elements.SOPInstanceUID).toBe(
      elements.SOPInstanceUID,
    );
  });

  /** storescp takes a moment to listen, longer on a busy machine: try to connect until it does. */
  async function untilListening(port: number, withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const open = await new Promise<boolean>((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      if (open) return;
      if (Date.now() > deadline) throw new Error(`storescp did not listen on ${port} within ${withinMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it.skipIf(!dcmtk)("pushes to DCMTK's storescp", async () => {
    const { channel } = await startChannel();
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const out = mkdtempSync(join(workDir, 'storescp-'));
    const scp = spawn('storescp', ['-aet', 'STORESCP', '-od', out, '--exec-on-reception', 'true', String(port)]);
    cleanup.push(() => void scp.kill());
    await untilListening(port, 15_000);
    const { file, elements } = syntheticInstance();
    const answer = await channel.push(`STORESCP@127.0.0.1:${port}`, dicomMessage(file), 10_000);
    expect(JSON.parse(answer!.body)).toEqual({ status: '0000' });
    const files = readdirSync(out);
    expect(files).toHaveLength(1);
    expect(readPart10(readFileSync(join(out, files[0]))).elements.SOPInstanceUID).toBe(elements.SOPInstanceUID);
  });
});
