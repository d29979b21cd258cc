// A Claim printed on a CMS-1500 style form (the NUCC 02/12 layout's boxes, drawn rather than
// overprinted on red stock), with pdf-lib. Six service lines a page, as on the paper form: a longer
// claim continues on more pages, the totals on the last. Free of HTTP and of the database: the
// caller gathers the resources (claim-print.ts).
import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib';

export interface PrintedLine {
  from: string;
  to: string;
  place?: string;
  code: string;
  modifiers?: string;
  pointers: string;
  charges: string;
  units: string;
  npi?: string;
}

/** What the form shows, already formatted: every field a string. */
export interface PrintedClaim {
  claimId: string;
  payerName: string;
  payerAddress: string[];
  insuranceType: string;
  memberId: string;
  patientName: string;
  patientBirthDate: string;
  patientSex: string;
  patientAddress: string[];
  patientPhone?: string;
  insuredName: string;
  relationship: string;
  groupNumber?: string;
  planName?: string;
  diagnoses: string[];
  lines: PrintedLine[];
  taxId?: string;
  accountNumber: string;
  totalCharge: string;
  amountPaid: string;
  balance: string;
  signedBy: string;
  signedDate: string;
  billingProvider: string[];
  billingNpi?: string;
}

const PAGE = { width: 612, height: 792 };
const MARGIN = 24;
const LINES_PER_PAGE = 6;
const RED = rgb(0.7, 0.1, 0.1);
const BLACK = rgb(0, 0, 0);

/** The characters a standard font can draw (WinAnsi); any other becomes '?'. */
function drawable(font: PDFFont, text: string): string {
  const set = new Set(font.getCharacterSet());
  return [...text.normalize('NFC')].map((c) => (set.has(c.codePointAt(0) as number) ? c : '?')).join('');
}

/** Text cut to a width, with an ellipsis when it does not fit. */
function fit(font: PDFFont, text: string, size: number, width: number): string {
  let t = drawable(font, text);
  if (font.widthOfTextAtSize(t, size) <= width) return t;
  while (t.length > 1 && font.widthOfTextAtSize(`${t}...`, size) > width) t = t.slice(0, -1);
  return `${t}...`;
}

class Form {
  constructor(
    private readonly page: PDFPage,
    private readonly font: PDFFont,
    private readonly bold: PDFFont,
  ) {}

  /** A box with its red label at the top and its values below (y is the box's top, from the page top). */
  box(x: number, y: number, w: number, h: number, label: string, values: string[] = [], size = 9): void {
    const top = PAGE.height - y;
    this.page.drawRectangle({ x, y: top - h, width: w, height: h, borderColor: RED, borderWidth: 0.6 });
    this.page.drawText(fit(this.font, label, 5.5, w - 4), {
      x: x + 2,
      y: top - 7,
      size: 5.5,
      font: this.font,
      color: RED,
    });
    values.forEach((v, i) => {
      if (!v) return;
      this.page.drawText(fit(this.font, v, size, w - 6), {
        x: x + 3,
        y: top - 8 - (i + 1) * (size + 2),
        size,
        font: this.font,
        color: BLACK,
      });
    });
  }

  text(x: number, y: number, text: string, size: number, bold = false, color = BLACK): void {
    this.page.drawText(drawable(bold ? this.bold : this.font, text), {
      x,
      y: PAGE.height - y,
      size,
      font: bold ? this.bold : this.font,
      color,
    });
  }
}

const W = PAGE.width - 2 * MARGIN;
const HALF = W / 2;

function header(form: Form, claim: PrintedClaim, page: number, pages: number): void {
  form.text(MARGIN, 36, 'HEALTH INSURANCE CLAIM FORM', 14, true);
  form.text(MARGIN, 48, 'CMS-1500 style (NUCC 02/12 layout)', 7, false, RED);
  form.text(MARGIN, 58, `Claim ${claim.claimId} - page ${page} of ${pages}`, 7);
  form.box(MARGIN + HALF, 24, HALF, 44, 'CARRIER (PAYER)', [claim.payerName, ...claim.payerAddress.slice(0, 2)], 8);
}

function insured(form: Form, claim: PrintedClaim): void {
  let y = 74;
  form.box(MARGIN, y, HALF, 28, '1. INSURANCE TYPE', [claim.insuranceType]);
  form.box(MARGIN + HALF, y, HALF, 28, "1a. INSURED'S I.D. NUMBER", [claim.memberId]);
  y += 28;
  form.box(MARGIN, y, HALF * 0.62, 28, "2. PATIENT'S NAME (Last, First, Middle)", [claim.patientName]);
  form.box(MARGIN + HALF * 0.62, y, HALF * 0.38, 28, "3. PATIENT'S BIRTH DATE / SEX", [
    `${claim.patientBirthDate}  ${claim.patientSex}`,
  ]);
  form.box(MARGIN + HALF, y, HALF, 28, "4. INSURED'S NAME (Last, First, Middle)", [claim.insuredName]);
  y += 28;
  form.box(
    MARGIN,
    y,
    HALF,
    40,
    "5. PATIENT'S ADDRESS (No., Street) / TELEPHONE",
    [...claim.patientAddress.slice(0, 2), claim.patientPhone ?? ''],
    8,
  );
  form.box(MARGIN + HALF, y, HALF, 40, '6. PATIENT RELATIONSHIP TO INSURED', [claim.relationship]);
  y += 40;
  form.box(MARGIN, y, HALF, 28, "11. INSURED'S POLICY GROUP OR FECA NUMBER", [claim.groupNumber ?? '']);
  form.box(MARGIN + HALF, y, HALF, 28, '11c. INSURANCE PLAN NAME OR PROGRAM NAME', [claim.planName ?? '']);
}

function diagnoses(form: Form, claim: PrintedClaim): void {
  const letters = 'ABCDEFGHIJKL';
  const y = 206;
  form.box(MARGIN, y, W, 52, '21. DIAGNOSIS OR NATURE OF ILLNESS OR INJURY (ICD Ind. 0)', []);
  claim.diagnoses.slice(0, 12).forEach((d, i) => {
    const col = i % 4;
    const row = Math.floor(i / 4);
    form.text(MARGIN + 6 + col * (W / 4), y + 22 + row * 11, `${letters[i]}. ${d}`, 9);
  });
}

const COLUMNS: { label: string; width: number; key: keyof PrintedLine }[] = [
  { label: '24A. FROM', width: 64, key: 'from' },
  { label: 'TO', width: 64, key: 'to' },
  { label: 'B. PLACE', width: 40, key: 'place' },
  { label: 'D. CPT/HCPCS', width: 76, key: 'code' },
  { label: 'MODIFIER', width: 60, key: 'modifiers' },
  { label: 'E. DIAG. POINTER', width: 62, key: 'pointers' },
  { label: 'F. $ CHARGES', width: 72, key: 'charges' },
  { label: 'G. UNITS', width: 40, key: 'units' },
  { label: 'J. RENDERING NPI', width: W - 478, key: 'npi' },
];

function serviceLines(form: Form, lines: PrintedLine[]): void {
  const top = 264;
  const rowHeight = 22;
  let x = MARGIN;
  for (const column of COLUMNS) {
    form.box(x, top, column.width, 14 + rowHeight * LINES_PER_PAGE, column.label, []);
    lines.forEach((line, i) => form.text(x + 3, top + 26 + i * rowHeight, String(line[column.key] ?? ''), 9));
    x += column.width;
  }
}

function totals(form: Form, claim: PrintedClaim, last: boolean): void {
  const y = 414;
  form.box(MARGIN, y, W * 0.3, 28, '25. FEDERAL TAX I.D. NUMBER', [claim.taxId ?? '']);
  form.box(MARGIN + W * 0.3, y, W * 0.25, 28, "26. PATIENT'S ACCOUNT NO.", [claim.accountNumber]);
  form.box(MARGIN + W * 0.55, y, W * 0.15, 28, '28. TOTAL CHARGE', [last ? `$ ${claim.totalCharge}` : 'continued']);
  form.box(MARGIN + W * 0.7, y, W * 0.15, 28, '29. AMOUNT PAID', [last ? `$ ${claim.amountPaid}` : '']);
  form.box(MARGIN + W * 0.85, y, W * 0.15, 28, '30. BALANCE DUE', [last ? `$ ${claim.balance}` : '']);
  const y2 = y + 28;
  form.box(MARGIN, y2, W / 3, 52, '31. SIGNATURE OF PHYSICIAN OR SUPPLIER', [claim.signedBy, claim.signedDate], 8);
  form.box(
    MARGIN + W / 3,
    y2,
    W / 3,
    52,
    '32. SERVICE FACILITY LOCATION INFORMATION',
    claim.billingProvider.slice(0, 3),
    8,
  );
  form.box(
    MARGIN + (2 * W) / 3,
    y2,
    W / 3,
    52,
    '33. BILLING PROVIDER INFO & PH #',
    [...claim.billingProvider.slice(0, 2), claim.billingNpi ? `a. NPI ${claim.billingNpi}` : ''],
    8,
  );
}

/** The claim as a PDF: one form page per six service lines. */
export async function renderClaimPdf(claim: PrintedClaim, createdAt = new Date()): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.setTitle(`Claim ${claim.claimId}`);
  doc.setSubject('CMS-1500 style health insurance claim');
  doc.setProducer('Hearth');
  doc.setCreator('Hearth');
  doc.setCreationDate(createdAt);
  doc.setModificationDate(createdAt);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const chunks: PrintedLine[][] = [];
  for (let i = 0; i < Math.max(claim.lines.length, 1); i += LINES_PER_PAGE)
    chunks.push(claim.lines.slice(i, i + LINES_PER_PAGE));
  chunks.forEach((lines, i) => {
    const form = new Form(doc.addPage([PAGE.width, PAGE.height]), font, bold);
    header(form, claim, i + 1, chunks.length);
    insured(form, claim);
    diagnoses(form, claim);
    serviceLines(form, lines);
    totals(form, claim, i === chunks.length - 1);
  });
  return Buffer.from(await doc.save());
}
