// The storage SCP: accepts associations called by our AE title, answers C-ECHO, and hands each
// C-STORE's data set (its bytes as they came) to the channel, answering with the status that
// delivery earned: success only once Hearth has the instance.
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import {
  CEchoResponse,
  CStoreResponse,
  Dataset,
  PresentationContextResult,
  RejectReason,
  RejectResult,
  RejectSource,
  Scp,
  SopClass,
  Status,
  TransferSyntax,
  type Association,
  type DimseCEchoRequest,
  type DimseCStoreRequest,
  type DimseDataset,
  type PresentationContext,
} from './dimse.js';

export interface ReceivedInstance {
  sopClassUid: string;
  sopInstanceUid: string;
  transferSyntaxUid: string;
  /** The data set's bytes in `transferSyntaxUid`, as received. */
  dataset: Buffer;
  callingAeTitle: string;
  remote: string;
}

export interface ScpOptions {
  aeTitle: string;
  /** When set, only these calling AE titles may associate. */
  callingAeTitles?: Set<string>;
  onInstance(instance: ReceivedInstance): Promise<void>;
  onProblem(message: string, fields: Record<string, unknown>): void;
}

/** Every storage SOP class sits under this root (PS3.4 Annex B.5, PS3.6 Annex A). */
const storageRoot = '1.2.840.10008.5.1.4.1.1.';

/**
 * Transfer syntaxes the SCP accepts, in order of preference. The channel stores the bytes as they
 * came and decodes nothing, so compressed syntaxes are as welcome as the uncompressed ones.
 */
const acceptedTransferSyntaxes = [
  TransferSyntax.ExplicitVRLittleEndian,
  TransferSyntax.ImplicitVRLittleEndian,
  TransferSyntax.DeflatedExplicitVRLittleEndian,
  TransferSyntax.ExplicitVRBigEndian,
  TransferSyntax.JpegBaseline,
  TransferSyntax.JpegLossless,
  TransferSyntax.JpegLsLossless,
  TransferSyntax.JpegLsLossy,
  TransferSyntax.Jpeg2000Lossless,
  TransferSyntax.Jpeg2000Lossy,
  TransferSyntax.RleLossless,
  '1.2.840.10008.1.2.4.51', // JPEG extended
  '1.2.840.10008.1.2.4.57', // JPEG lossless, non-hierarchical
];

function chooseTransferSyntax(context: PresentationContext): string | undefined {
  const proposed = context.getTransferSyntaxUids();
  return acceptedTransferSyntaxes.find((ts) => proposed.includes(ts));
}

export function storageScpClass(options: ScpOptions): typeof Scp {
  return class HearthStorageScp extends Scp {
    private association: Association | undefined;
    private readonly remote: string;
    /** Raw data set bytes, kept beside the Dataset the library passes to cStoreRequest. */
    private readonly rawDatasets = new WeakMap<DimseDataset, { bytes: Buffer; transferSyntaxUid: string }>();

    constructor(socket: Socket, opts?: ConstructorParameters<typeof Scp>[1]) {
      super(socket, opts);
      this.remote = `${socket.remoteAddress}:${socket.remotePort}`;
    }

    override associationRequested(association: Association): void {
      this.association = association;
      const called = association.getCalledAeTitle().trim();
      const calling = association.getCallingAeTitle().trim();
      if (called !== options.aeTitle) {
        options.onProblem(`association for AE title '${called}' refused: this channel is '${options.aeTitle}'`, {
          calling,
          remote: this.remote,
        });
        this.sendAssociationReject(
          RejectResult.Permanent,
          RejectSource.ServiceUser,
          RejectReason.CalledAeNotRecognized,
        );
        return;
      }
      if (options.callingAeTitles && !options.callingAeTitles.has(calling)) {
        options.onProblem(`association from unknown AE title '${calling}' refused`, { remote: this.remote });
        this.sendAssociationReject(
          RejectResult.Permanent,
          RejectSource.ServiceUser,
          RejectReason.CallingAeNotRecognized,
        );
        return;
      }
      for (const { id } of association.getPresentationContexts()) {
        const context = association.getPresentationContext(id);
        const abstract = context.getAbstractSyntaxUid();
        if (abstract !== SopClass.Verification && !abstract.startsWith(storageRoot)) {
          context.setResult(PresentationContextResult.RejectAbstractSyntaxNotSupported);
          continue;
        }
        const ts = chooseTransferSyntax(context);
        if (ts) context.setResult(PresentationContextResult.Accept, ts);
        else context.setResult(PresentationContextResult.RejectTransferSyntaxesNotSupported);
      }
      this.sendAssociationAccept();
    }

    override associationReleaseRequested(): void {
      this.sendAssociationReleaseResponse();
    }

    override cEchoRequest(
      request: DimseCEchoRequest,
      callback: (response: InstanceType<typeof CEchoResponse>) => void,
    ): void {
      const response = CEchoResponse.fromRequest(request);
      response.setStatus(Status.Success);
      callback(response);
    }

    override createDatasetFromStoreWritableStream(
      writable: Writable,
      context: PresentationContext,
      callback: (dataset: DimseDataset) => void,
    ): void {
      // Keep the bytes as they came; the library's default would parse them into a Dataset we do not need.
      const bytes = (writable as Writable & { toBuffer(): Buffer }).toBuffer();
      const transferSyntaxUid = context.getAcceptedTransferSyntaxUid() ?? TransferSyntax.ImplicitVRLittleEndian;
      const dataset = new Dataset({}, transferSyntaxUid);
      this.rawDatasets.set(dataset, { bytes, transferSyntaxUid });
      callback(dataset);
    }

    override cStoreRequest(
      request: DimseCStoreRequest,
      callback: (response: InstanceType<typeof CStoreResponse>) => void,
    ): void {
      const response = CStoreResponse.fromRequest(request);
      const dataset = request.getDataset();
      const raw = dataset && this.rawDatasets.get(dataset);
      const sopInstanceUid = request.getAffectedSopInstanceUid();
      if (!raw || raw.bytes.length === 0) {
        response.setStatus(Status.ProcessingFailure);
        response.setErrorComment('no data set');
        callback(response);
        return;
      }
      const instance: ReceivedInstance = {
        sopClassUid: request.getAffectedSopClassUid(),
        sopInstanceUid,
        transferSyntaxUid: raw.transferSyntaxUid,
        dataset: raw.bytes,
        callingAeTitle: this.association?.getCallingAeTitle().trim() ?? '',
        remote: this.remote,
      };
      options.onInstance(instance).then(
        () => {
          response.setStatus(Status.Success);
          callback(response);
        },
        (error: unknown) => {
          const message = error instanceof Error ? error.message : String(error);
          options.onProblem(`instance ${sopInstanceUid} was not delivered: ${message}`, { remote: this.remote });
          // 0110 Processing failure: the modality keeps the instance and may send it again.
          response.setStatus(Status.ProcessingFailure);
          response.setErrorComment(message.slice(0, 64));
          callback(response);
        },
      );
    }
  };
}
