import { Alert, Box, Button, Group, Loader, SimpleGrid, Slider, Stack, Table, Text } from '@mantine/core';
import { useEffect, useMemo, useRef, useState, type PointerEvent, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import {
  initialWindow,
  readDicom,
  renderFrame,
  transferSyntaxName,
  type DicomImage,
  type Window,
} from './dicom-image.js';

export interface DicomViewerProps {
  /** The instance's DICOM Part 10 file: a Binary on this server ('Binary/…'), fetched with the session's token. */
  binary: string;
  /** The downloaded file's name (default: the Binary's id with .dcm). */
  fileName?: string;
}

interface Loaded {
  bytes: Uint8Array;
  image?: DicomImage;
  /** Why the file could not be read at all (not DICOM). */
  failure?: string;
}

/**
 * A DICOM instance stored as a Binary, drawn on a canvas: grey-level images (MONOCHROME1/2, 8 or
 * 16 bits, rescaled) through an adjustable window (sliders, or dragging on the image: sideways
 * the width, up and down the center), colour images as they are, a frame slider for multi-frame
 * files, and the main attributes. A file it cannot draw says why (naming the transfer syntax)
 * and offers the download.
 */
export function DicomViewer({ binary, fileName }: DicomViewerProps): ReactNode {
  const client = useHearth();
  const loaded = useAsync<Loaded>(async () => {
    const blob = await client.download(binary);
    const bytes = new Uint8Array(await blob.arrayBuffer());
    try {
      return { bytes, image: await readDicom(bytes) };
    } catch (err) {
      return { bytes, failure: err instanceof Error ? err.message : String(err) };
    }
  }, binary);
  const name = fileName ?? `${binary.split('/').pop() ?? 'instance'}.dcm`;
  if (loaded.error) return <OperationOutcomeAlert error={loaded.error} />;
  if (!loaded.data) return <Loader aria-label="Loading image" />;
  const { bytes, image, failure } = loaded.data;
  const download = <DownloadButton bytes={bytes} fileName={name} />;
  if (!image) {
    return (
      <Alert color="red" title="This file cannot be shown">
        <Stack gap="xs" align="flex-start">
          <Text size="sm">{failure}</Text>
          {download}
        </Stack>
      </Alert>
    );
  }
  return (
    <Stack gap="sm">
      {image.unsupported ? (
        <Alert color="yellow" title="This image cannot be shown here">
          <Stack gap="xs" align="flex-start">
            <Text size="sm">{image.unsupported}</Text>
            <Text size="sm">Download the file to open it in a DICOM workstation.</Text>
            {download}
          </Stack>
        </Alert>
      ) : (
        <ImageView image={image} download={download} />
      )}
      <DicomTagTable image={image} />
    </Stack>
  );
}

function DownloadButton({ bytes, fileName }: { bytes: Uint8Array; fileName: string }): ReactNode {
  const [href, setHref] = useState<string | undefined>(undefined);
  useEffect(() => {
    const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: 'application/dicom' }));
    setHref(url);
    return () => URL.revokeObjectURL(url);
  }, [bytes]);
  return (
    <Button component="a" href={href} download={fileName} variant="default" size="xs">
      Download DICOM file
    </Button>
  );
}

/** Slider bounds for the window: around the image's values, and wide enough for the file's own window. */
function windowBounds(
  image: DicomImage,
  start: Window,
): { center: [number, number]; width: [number, number]; step: number } {
  const { min, max } = image.range ?? { min: 0, max: 255 };
  const span = Math.max(1, max - min);
  // About a hundredth of the values' span, rounded to 1, 2 or 5 × 10^n (whole numbers from a span of 100).
  const raw = span / 100;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step =
    span >= 100 ? Math.max(1, Math.round(raw)) : ([1, 2, 5].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  return {
    center: [Math.min(min - span / 2, start.center), Math.max(max + span / 2, start.center)],
    width: [step, Math.max(span * 2, start.width)],
    step,
  };
}

function ImageView({ image, download }: { image: DicomImage; download: ReactNode }): ReactNode {
  const canvas = useRef<HTMLCanvasElement>(null);
  const start = useMemo(() => initialWindow(image), [image]);
  const bounds = useMemo(() => windowBounds(image, start), [image, start]);
  const [voi, setWindow] = useState<Window>(start);
  const [frame, setFrame] = useState(0);
  const drag = useRef<{ x: number; y: number; voi: Window } | undefined>(undefined);
  const grey = !!image.grey;

  useEffect(() => {
    const context = canvas.current?.getContext('2d');
    if (!context) return;
    const data = context.createImageData(image.columns, image.rows);
    renderFrame(image, frame, voi, data.data);
    context.putImageData(data, 0, 0);
  }, [image, frame, voi]);

  const clampWindow = (w: Window): Window => ({
    center: Math.min(bounds.center[1], Math.max(bounds.center[0], w.center)),
    width: Math.min(bounds.width[1], Math.max(bounds.width[0], w.width)),
  });
  const onPointerDown = (e: PointerEvent<HTMLCanvasElement>) => {
    if (!grey || !Number.isFinite(e.clientX) || !Number.isFinite(e.clientY)) return;
    e.currentTarget.setPointerCapture?.(e.pointerId);
    drag.current = { x: e.clientX, y: e.clientY, voi };
  };
  const onPointerMove = (e: PointerEvent<HTMLCanvasElement>) => {
    const from = drag.current;
    if (!from || !Number.isFinite(e.clientX) || !Number.isFinite(e.clientY)) return;
    // Across the whole image: the width's range sideways, the center's range up and down.
    const box = e.currentTarget.getBoundingClientRect();
    const dx = (e.clientX - from.x) / Math.max(1, box.width);
    const dy = (e.clientY - from.y) / Math.max(1, box.height);
    setWindow(
      clampWindow({
        width: from.voi.width + dx * (bounds.width[1] - bounds.width[0]),
        center: from.voi.center - dy * (bounds.center[1] - bounds.center[0]),
      }),
    );
  };
  const endDrag = () => {
    drag.current = undefined;
  };
  const label = [
    image.tags.modality,
    `${image.columns} × ${image.rows}`,
    image.frames > 1 && `frame ${frame + 1} of ${image.frames}`,
  ]
    .filter(Boolean)
    .join(', ');
  const round = (v: number) => (bounds.step >= 1 ? Math.round(v) : Math.round(v * 100) / 100);

  return (
    <Stack gap="xs">
      <Box bg="black" style={{ display: 'flex', justifyContent: 'center', borderRadius: 4 }}>
        <canvas
          ref={canvas}
          width={image.columns}
          height={image.rows}
          role="img"
          aria-label={`DICOM image: ${label}`}
          data-window-center={voi.center}
          data-window-width={voi.width}
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={endDrag}
          onPointerCancel={endDrag}
          style={{
            width: '100%',
            maxWidth: Math.max(image.columns, 512),
            maxHeight: '70vh',
            objectFit: 'contain',
            aspectRatio: `${image.columns} / ${image.rows}`,
            imageRendering: image.columns < 512 ? 'pixelated' : 'auto',
            touchAction: grey ? 'none' : 'auto',
            cursor: grey ? 'move' : 'default',
          }}
        />
      </Box>
      {grey && (
        <Text size="xs" c="dimmed">
          Window {round(voi.center)} / {round(voi.width)} (center / width). Drag on the image: sideways for the width,
          up and down for the center.
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }} spacing="md" verticalSpacing="xs">
        {grey && (
          <Stack gap={4}>
            <Text size="sm" aria-hidden>
              Window center
            </Text>
            <Slider
              thumbLabel="Window center"
              min={bounds.center[0]}
              max={bounds.center[1]}
              step={bounds.step}
              value={voi.center}
              onChange={(center) => setWindow((w) => ({ ...w, center }))}
              label={round}
            />
          </Stack>
        )}
        {grey && (
          <Stack gap={4}>
            <Text size="sm" aria-hidden>
              Window width
            </Text>
            <Slider
              thumbLabel="Window width"
              min={bounds.width[0]}
              max={bounds.width[1]}
              step={bounds.step}
              value={voi.width}
              onChange={(width) => setWindow((w) => ({ ...w, width }))}
              label={round}
            />
          </Stack>
        )}
        {image.frames > 1 && (
          <Stack gap={4}>
            <Text size="sm" aria-hidden>
              Frame {frame + 1} of {image.frames}
            </Text>
            <Slider
              thumbLabel="Frame"
              min={1}
              max={image.frames}
              step={1}
              value={frame + 1}
              onChange={(f) => setFrame(f - 1)}
            />
          </Stack>
        )}
      </SimpleGrid>
      <Group gap="xs">
        {grey && (
          <Button size="xs" variant="default" onClick={() => setWindow(start)}>
            Reset window
          </Button>
        )}
        {download}
      </Group>
    </Stack>
  );
}

function DicomTagTable({ image }: { image: DicomImage }): ReactNode {
  const { tags } = image;
  const rows: [string, string | undefined][] = [
    ['Patient', [tags.patientName, tags.patientId && `(${tags.patientId})`].filter(Boolean).join(' ') || undefined],
    ['Study', [tags.studyDescription, tags.studyDate].filter(Boolean).join(' · ') || undefined],
    [
      'Series',
      [tags.seriesNumber && `Series ${tags.seriesNumber}`, tags.seriesDescription].filter(Boolean).join(' · ') ||
        undefined,
    ],
    ['Instance', tags.instanceNumber],
    ['Modality', tags.modality],
    [
      'Dimensions',
      image.rows && image.columns
        ? `${image.columns} × ${image.rows}${image.frames > 1 ? `, ${image.frames} frames` : ''}`
        : undefined,
    ],
    [
      'Pixels',
      [image.photometric, image.bitsAllocated ? `${image.bitsAllocated}-bit` : undefined].filter(Boolean).join(', ') ||
        undefined,
    ],
    ['Transfer syntax', transferSyntaxName(image.transferSyntaxUid)],
  ];
  return (
    <Table aria-label="DICOM attributes" withRowBorders={false} verticalSpacing={2} fz="sm">
      <Table.Tbody>
        {rows
          .filter(([, v]) => v)
          .map(([k, v]) => (
            <Table.Tr key={k}>
              <Table.Th scope="row" w={140} fw={500}>
                {k}
              </Table.Th>
              <Table.Td style={{ overflowWrap: 'anywhere' }}>{v}</Table.Td>
            </Table.Tr>
          ))}
      </Table.Tbody>
    </Table>
  );
}
