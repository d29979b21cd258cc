// End to end over the agent's other protocols: an analyzer's ASTM transmissions and a modality's
// DICOM C-STOREs reach Hearth through a running hearth-agent and a real server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImagingStudy } from '@hearth/core';
import { createTestApp, getFreePort, type TestApp } from '../../server/src/test/app.js';
import { createTestAgent, type TestAgent } from '../../server/src/agent/testing.js';
import { get, waitFor } from '../../server/src/bots/testing.js';
import { HearthAgent } from './agent.js';
import { ACK, ENQ, EOT } from './channels/astm/frames.js';
import { SimulatedAnalyzer } from './channels/astm/simulated-peer.test-util.js';
import { cStore, isStoreSuccess } from './channels/dicom/scu.js';
import { syntheticInstance } from './channels/dicom/synthetic.test-util.js';
import { quietLog } from './testing.js';

// One bot for both: results become Observations, a host query is answered with its orders, and a
// stored DICOM instance's study is noted.
const BOT = `
import { astmValue, formatAstmRecord, formatAstmTransmission, parseAstmTransmission } from '@hearth/core';
export async function handler(client: any, event: any) {
  if (event.contentType === 'application/fhir+json') {
    const study = event.input;
    await client.createResource({ resourceType: 'Basic', code: { text: 'study ' + study.identifier[0].value } });
    return 'noted';
  }
  const answer: string[] = [];
  for (const message of parseAstmTransmission(event.input).messages) {
    for (const query of message.queries) {
      const specimen = astmValue(query, 3, 2);
      answer.push(
        formatAstmRecord(['H', '']),
        formatAstmRecord(['P', '1']),
        formatAstmRecord(['O', '1', specimen, '', ['', '', '', 'GLU'], 'R']),
        formatAstmRecord(['L', '1', 'N']),
      );
    }
    for (const patient of message.patients) {
      for (const order of patient.orders) {
        for (const result of order.results) {
          await client.createResource({
            resourceType: 'Observation',
            status: 'final',
            identifier: [{ system: 'urn:specimen', value: astmValue(order.record, 3) }],
            code: { text: astmValue(result.record, 3, 4) },
            valueQuantity: { value: Number(astmValue(result.record, 4)), unit: astmValue(result.record, 5) },
          });
        }
      }
    }
  }
  return answer.length ? formatAstmTransmission(answer) : undefined;
}
`;

let t: TestApp;
let testAgent: TestAgent;
let agent: HearthAgent;
let dataDir: string;
let astmPort: number;
let dicomPort: number;

beforeAll(async () => {
  t = await createTestApp({ listen: true });
  [astmPort, dicomPort] = [await getFreePort(), await getFreePort()];
  testAgent = await createTestAgent(t, BOT, [
    { name: 'analyzer', address: `astm://127.0.0.1:${astmPort}` },
    { name: 'pacs', address: `dicom://127.0.0.1:${dicomPort}?aeTitle=HEARTH` },
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'hearth-agent-protocols-'));
  agent = new HearthAgent(
    {
      baseUrl: t.baseUrl,
      agentId: testAgent.agentId,
      clientId: testAgent.clientId,
      clientSecret: testAgent.clientSecret,
      dataDir,
      heartbeatMs: 1000,
    },
    quietLog,
  );
  await agent.start();
});

afterAll(async () => {
  await agent?.stop();
  await t?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function searchJson<T>(path: string): Promise<T[]> {
  const bundle = (await get(t, `fhir/R4/${path}`)).json() as { entry?: { resource: T }[] };
  return (bundle.entry ?? []).map((e) => e.resource);
}

describe('hearth-agent: ASTM and DICOM channels from the Agent resource', () => {
  it('starts an astm:// and a dicom:// channel', () => {
    expect([...agent.runningChannels().keys()].sort()).toEqual(['analyzer', 'pacs']);
  });

  it("an analyzer's results reach the bot, which stores them as Observations", async () => {
    const analyzer = await SimulatedAnalyzer.connect(astmPort);
    await analyzer.transmit([
      'H|\\^&|||ACME^1.0|||||||P|1',
      'P|1|PID-1|||Doe^Jane',
      'O|1|SPEC-42||^^^GLU|R',
      'R|1|^^^GLU|5.4|mmol/L||N||F',
      'R|2|^^^NA|140|mmol/L||N||F',
      'L|1|N',
    ]);
    analyzer.close();
    const stored = await waitFor(async () => {
      const found = await searchJson<{ code: { text: string }; valueQuantity: { value: number } }>(
        'Observation?identifier=urn:specimen|SPEC-42',
      );
      return found.length === 2 ? found : undefined;
    });
    expect(stored.map((o) => `${o.code.text}=${o.valueQuantity.value}`).sort()).toEqual(['GLU=5.4', 'NA=140']);
  });

  it("a host query is answered on the analyzer's own connection with the orders the bot returns", async () => {
    const analyzer = await SimulatedAnalyzer.connect(astmPort);
    await analyzer.transmit(['H|\\^&', 'Q|1|^SPEC-7||ALL', 'L|1|N']);
    expect(await analyzer.input.next(15_000)).toBe(ENQ);
    analyzer.socket.write(Buffer.from([ACK]));
    let text = '';
    for (;;) {
      const b = await analyzer.input.next(15_000);
      if (b === EOT) break;
      const frame = await analyzer.input.frame();
      expect(frame.checksumOk).toBe(true);
      text += frame.text;
      analyzer.socket.write(Buffer.from([ACK]));
    }
    analyzer.close();
    expect(text).toBe('H|\\^&\rP|1\rO|1|SPEC-7||^^^GLU|R\rL|1|N\r');
  });

  it('a C-STORE lands as an ImagingStudy and a Binary before the bot sees the study; sent again, it is stored once', async () => {
    const studyUid = `2.25.${Date.now()}1`;
    const instance = syntheticInstance({ studyUid, patientId: 'MRN-AGENT', modality: 'CT' });
    const destination = { aeTitle: 'HEARTH', host: '127.0.0.1', port: dicomPort };
    for (let i = 0; i < 2; i++) {
      const result = await cStore(destination, instance.file, 'MODALITY', 30_000);
      expect(isStoreSuccess(result.status)).toBe(true);
    }
    const [study] = await searchJson<ImagingStudy>(`ImagingStudy?identifier=urn:dicom:uid|urn:oid:${studyUid}`);
    expect(study).toBeDefined();
    expect(study.numberOfInstances).toBe(1);
    expect(study.series?.[0]?.modality?.code).toBe('CT');
    const instanceRow = study.series?.[0]?.instance?.[0];
    expect(instanceRow?.uid).toBe(instance.elements.SOPInstanceUID);
    // The instance's file is kept as a Binary the study points at.
    const binary = instanceRow?.extension?.find((e) => e.valueReference)?.valueReference?.reference;
    expect(binary).toMatch(/^Binary\//);
    expect((await get(t, `fhir/R4/${binary}`)).status).toBe(200);
    // The bot saw the study once: the same instance sent again is the same message (its content
    // hash), answered from the delivery record.
    const notes = await searchJson<unknown>(`Basic?code:text=${encodeURIComponent(`study urn:oid:${studyUid}`)}`);
    expect(notes).toHaveLength(1);
    // A second instance of the study joins it, and the bot sees the study again.
    const second = syntheticInstance({ studyUid, modality: 'CT', instanceNumber: 2 });
    expect(isStoreSuccess((await cStore(destination, second.file, 'MODALITY', 30_000)).status)).toBe(true);
    const [grown] = await searchJson<ImagingStudy>(`ImagingStudy?identifier=urn:dicom:uid|urn:oid:${studyUid}`);
    expect(grown.numberOfInstances).toBe(2);
    expect(
      await searchJson<unknown>(`Basic?code:text=${encodeURIComponent(`study urn:oid:${studyUid}`)}`),
    ).toHaveLength(2);
  });

  it('a C-STORE of something that is not a storable instance is refused with a failure status, and nothing is stored', async () => {
    const instance = syntheticInstance({ studyUid: 'not a uid' });
    const result = await cStore(
      { aeTitle: 'HEARTH', host: '127.0.0.1', port: dicomPort },
      instance.file,
      'MOD',
      30_000,
    );
    expect(isStoreSuccess(result.status)).toBe(false);
    expect(await searchJson<unknown>('ImagingStudy?identifier=urn:oid:not%20a%20uid')).toHaveLength(0);
  });
});
