// dcmjs-dimse is CommonJS: Node's ESM loader sees only its default export.
import dimse from 'dcmjs-dimse';

export const { Client, Dataset, Scp, log: dimseLog } = dimse;
export const { CEchoResponse, CStoreResponse } = dimse.responses;
export const { CEchoRequest, CStoreRequest } = dimse.requests;
export const { PresentationContextResult, RejectReason, RejectResult, RejectSource, SopClass, Status, TransferSyntax } =
  dimse.constants;
export type Association = InstanceType<typeof dimse.association.Association>;
export type PresentationContext = InstanceType<typeof dimse.association.PresentationContext>;
export type DimseCStoreRequest = InstanceType<typeof dimse.requests.CStoreRequest>;
export type DimseCEchoRequest = InstanceType<typeof dimse.requests.CEchoRequest>;
export type DimseDataset = InstanceType<typeof dimse.Dataset>;

// The library logs every PDU at info level to the console; the channel logs what matters itself.
dimseLog.setLevel('warn');
