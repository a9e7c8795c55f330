import PDFDocument from 'pdfkit';
import type { MonthSummary, Quantities } from './usage-summary';
import { SUMMARY_LIMITS } from './usage-summary';

/** What the title page says besides the data. */
export interface SummaryMeta {
  generatedAt: Date;
  /** The site's name (branding app name); empty: not printed. */
  siteName: string;
  /** DEPLOYMENT_TYPE of the deployment. */
  deploymentType: string;
}

/** `usage-summary-productdb-2026-10.pdf` */
export const summaryFileName = (s: Pick<MonthSummary, 'product' | 'year' | 'month'>) =>
  `usage-summary-${s.product}-${s.year}-${String(s.month).padStart(2, '0')}.pdf`;

const FONT = 'Helvetica';
const BOLD = 'Helvetica-Bold';
const ITALIC = 'Helvetica-Oblique';
const GREY = '#555555';
const ACCENT = '#1f6feb';
const MARGIN = 50;
const ROW = 15;

/** Table columns: text on the left, quantities right-aligned; widths add up to the A4 text width (495 pt). */
const COLUMNS = [
  { title: 'Kind', width: 80, align: 'left' },
  { title: 'Name', width: 145, align: 'left' },
  { title: 'Version', width: 55, align: 'left' },
  { title: 'Core-hours', width: 70, align: 'right' },
  { title: 'Memory GiB-h', width: 72, align: 'right' },
  { title: 'Storage GiB-h', width: 73, align: 'right' },
] as const;

const number = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
/** The standard PDF fonts encode WinAnsi only: anything else is printed as "?" rather than as wrong glyphs. */
const printable = (text: string) => text.replace(/[^\x20-\x7e\u00a0-\u00ff]/g, '?');

/**
 * The month's summary as a PDF (docs/usage-summary-pdf.md): a title page with the totals and a bar chart of
 * daily core-hours, then a table per cluster and namespace, the "other" rows the bounds leave, and the totals.
 * A month without usage is a title page saying so.
 */
export function renderSummaryPdf(summary: MonthSummary, meta: SummaryMeta): Promise<Buffer> {
  const monthTitle = new Date(Date.UTC(summary.year, summary.month - 1, 1)).toLocaleString('en-US', {
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true,
    info: {
      Title: `Usage summary: ${summary.product}, ${monthTitle}`,
      Author: printable(meta.siteName || 'Platform'),
      Subject: 'Database product usage',
      CreationDate: meta.generatedAt,
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  titlePage(doc, summary, meta, monthTitle);
  if (summary.totals.objects > 0) tables(doc, summary);
  footers(doc, `Usage summary · ${summary.product} · ${monthTitle}`);
  doc.end();
  return done;
}

function titlePage(doc: PDFKit.PDFDocument, s: MonthSummary, meta: SummaryMeta, monthTitle: string): void {
  const width = pageWidth(doc);
  doc.font(BOLD).fontSize(26).fillColor('black').text('Usage summary', MARGIN, 90, { width });
  doc.moveDown(0.3).font(FONT).fontSize(15).fillColor(ACCENT).text(`Database product (${s.product})`, { width });
  doc.moveDown(0.2).fillColor('black').fontSize(15).text(monthTitle, { width });
  doc.moveDown(1).fontSize(10).fillColor(GREY);
  doc.text(`Generated ${meta.generatedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`, { width });
  if (meta.siteName) doc.text(`Site: ${printable(meta.siteName)}`, { width });
  if (meta.deploymentType) doc.text(`Deployment: ${meta.deploymentType}`, { width });
  doc.moveDown(2).fillColor('black');

  if (s.totals.objects === 0) {
    doc.font(BOLD).fontSize(13).text(`No usage of ${s.product} was reported for ${monthTitle}.`, { width });
    doc.moveDown(0.5).font(FONT).fontSize(10).fillColor(GREY);
    doc.text('The member clusters sent no usage samples of the database product for this month, so there is nothing to total or chart.', {
      width,
    });
    return;
  }

  doc.font(BOLD).fontSize(13).text('Totals', { width });
  doc.moveDown(0.4);
  const t = s.totals;
  const facts: [string, string][] = [
    ['Clusters', t.clusters.toLocaleString('en-US')],
    ['Namespaces', t.namespaces.toLocaleString('en-US')],
    ['Objects', t.objects.toLocaleString('en-US')],
    ['Core-hours', number(t.cpuCoreHours)],
    ['Memory GiB-hours', number(t.memoryGibHours)],
    ['Storage GiB-hours', number(t.storageGibHours)],
  ];
  let y = doc.y;
  for (const [label, value] of facts) {
    doc.font(FONT).fontSize(10).fillColor(GREY).text(label, MARGIN, y, { width: 150, lineBreak: false });
    doc
      .font(BOLD)
      .fillColor('black')
      .text(value, MARGIN + 150, y, { width: 120, align: 'right', lineBreak: false });
    y += ROW;
  }
  doc.y = y + 25;
  chart(doc, s.dailyCoreHours);
}

/** A bar chart of core-hours per day, with a labelled value axis and day numbers under the bars. */
function chart(doc: PDFKit.PDFDocument, daily: number[]): void {
  const width = pageWidth(doc);
  doc.font(BOLD).fontSize(13).fillColor('black').text('Core-hours per day', MARGIN, doc.y, { width });
  const top = doc.y + 10;
  const height = 200;
  const axisWidth = 50;
  const left = MARGIN + axisWidth;
  const plotWidth = width - axisWidth;
  const bottom = top + height;
  const max = niceCeiling(Math.max(...daily));
  const ticks = 4;

  doc.font(FONT).fontSize(8);
  for (let i = 0; i <= ticks; i++) {
    const value = (max / ticks) * i;
    const y = bottom - (height / ticks) * i;
    doc
      .moveTo(left, y)
      .lineTo(left + plotWidth, y)
      .lineWidth(0.5)
      .strokeColor(i === 0 ? '#333333' : '#dddddd')
      .stroke();
    doc.fillColor(GREY).text(number(value), MARGIN, y - 4, { width: axisWidth - 6, align: 'right', lineBreak: false });
  }
  const slot = plotWidth / daily.length;
  daily.forEach((value, i) => {
    const barHeight = max > 0 ? (value / max) * height : 0;
    if (barHeight > 0) doc.rect(left + i * slot + slot * 0.15, bottom - barHeight, slot * 0.7, barHeight).fill(ACCENT);
    const day = i + 1;
    if (day === 1 || day % 5 === 0 || day === daily.length)
      doc.fillColor(GREY).text(String(day), left + i * slot, bottom + 4, { width: slot, align: 'center', lineBreak: false });
  });
  doc.fillColor(GREY).text('Day of the month (UTC)', left, bottom + 16, { width: plotWidth, align: 'center', lineBreak: false });
  doc.fillColor('black');
  doc.y = bottom + 40;
}

/** 1, 2 or 5 times a power of ten, at least n (1 for nothing): the value axis ends on a round number. */
function niceCeiling(n: number): number {
  if (!(n > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= n)!;
}

function tables(doc: PDFKit.PDFDocument, s: MonthSummary): void {
  const table = new Table(doc);
  doc.addPage();
  doc
    .font(BOLD)
    .fontSize(16)
    .fillColor('black')
    .text('Usage by cluster and namespace', MARGIN, MARGIN, { width: pageWidth(doc) });
  doc.moveDown(0.3).font(FONT).fontSize(9).fillColor(GREY);
  doc.text(
    `Objects are ordered by core-hours. Each namespace lists at most ${SUMMARY_LIMITS.objectsPerNamespace} objects and the ` +
      `document at most ${SUMMARY_LIMITS.namespaces} namespaces; the rest is summed in "other" rows, and the totals count everything.`,
    { width: pageWidth(doc) },
  );
  doc.moveDown(0.8);
  for (const ns of s.namespaces) {
    const heading = `Cluster ${printable(ns.clusterName)} · namespace ${ns.namespace ? printable(ns.namespace) : '(cluster-scoped objects)'}`;
    table.start(heading, `cluster UID ${ns.clusterUid}`);
    for (const o of ns.objects) table.row([printable(o.kind), printable(o.name), printable(o.version), ...amounts(o)]);
    if (ns.otherObjects) table.row([count(ns.otherObjects.objects, 'other object'), '', '', ...amounts(ns.otherObjects)], ITALIC);
    table.row([`Subtotal (${count(ns.subtotal.objects, 'object')})`, '', '', ...amounts(ns.subtotal)], BOLD);
    table.end();
  }
  if (s.otherNamespaces) {
    const o = s.otherNamespaces;
    table.start('Other clusters and namespaces', 'beyond the namespaces listed above, summed');
    table.row([`${count(o.namespaces, 'namespace')}, ${count(o.objects, 'object')}`, '', '', ...amounts(o)], ITALIC);
    table.end();
  }
  const t = s.totals;
  table.start('Totals', `${count(t.clusters, 'cluster')}, ${count(t.namespaces, 'namespace')}`);
  table.row([`All ${count(t.objects, 'object')}`, '', '', ...amounts(t)], BOLD);
  table.end();
}

const amounts = (q: Quantities) => [number(q.cpuCoreHours), number(q.memoryGibHours), number(q.storageGibHours)];

/** Draws tables row by row, starting a new page (with the table's header again) when a row would not fit. */
class Table {
  private heading = '';

  constructor(private readonly doc: PDFKit.PDFDocument) {}

  start(heading: string, note: string): void {
    this.heading = heading;
    // A heading, its note, the header and two rows stay together.
    this.room(ROW * 5);
    this.line(heading, BOLD, 11, 'black', 14);
    this.line(note, FONT, 8, GREY, 12);
    this.header();
  }

  row(cells: string[], font = FONT): void {
    if (this.room(ROW)) {
      this.line(`${this.heading} (continued)`, ITALIC, 9, GREY, ROW);
      this.header();
    }
    this.cells(cells, font, 'black');
  }

  end(): void {
    this.doc.y += 14;
  }

  /** One line across the page, cut to fit, and the space under it. */
  private line(text: string, font: string, size: number, color: string, advance: number): void {
    const width = pageWidth(this.doc);
    this.doc.font(font).fontSize(size).fillColor(color);
    this.doc.text(this.clipToWidth(text, width), MARGIN, this.doc.y, { width, lineBreak: false });
    this.doc.y += advance;
  }

  private header(): void {
    this.cells(
      COLUMNS.map((c) => c.title),
      BOLD,
      GREY,
    );
    const y = this.doc.y - 2;
    this.doc
      .moveTo(MARGIN, y)
      .lineTo(MARGIN + pageWidth(this.doc), y)
      .lineWidth(0.5)
      .strokeColor('#999999')
      .stroke();
  }

  private cells(cells: string[], font: string, color: string): void {
    const y = this.doc.y;
    let x = MARGIN;
    this.doc.font(font).fontSize(9).fillColor(color);
    COLUMNS.forEach((c, i) => {
      // A label runs on over the empty cells after it (the "other" and subtotal rows).
      let width = c.width;
      for (let j = i + 1; j < COLUMNS.length && cells[j] === ''; j++) width += COLUMNS[j].width;
      if (cells[i]) this.doc.text(this.clipToWidth(cells[i], width - 6), x, y, { width: width - 6, align: c.align, lineBreak: false });
      x += c.width;
    });
    this.doc.y = y + ROW;
  }

  /** The text cut to the width, with an ellipsis where it was cut. */
  private clipToWidth(text: string, width: number): string {
    if (this.doc.widthOfString(text) <= width) return text;
    let cut = text;
    while (cut.length > 1 && this.doc.widthOfString(`${cut}...`) > width) cut = cut.slice(0, -1);
    return `${cut}...`;
  }

  /** Starts a new page when `height` does not fit on this one; answers whether it did. */
  private room(height: number): boolean {
    if (this.doc.y + height <= this.doc.page.height - MARGIN - 20) return false;
    this.doc.addPage();
    this.doc.y = MARGIN;
    return true;
  }
}

/** "<title> · page i of n" at the foot of every page. */
function footers(doc: PDFKit.PDFDocument, title: string): void {
  const { start, count: pages } = doc.bufferedPageRange();
  for (let i = start; i < start + pages; i++) {
    doc.switchToPage(i);
    // Writing under the bottom margin would start a new page; the footer sits there on purpose.
    doc.page.margins.bottom = 0;
    doc
      .font(FONT)
      .fontSize(8)
      .fillColor(GREY)
      .text(`${title} · page ${i - start + 1} of ${pages}`, MARGIN, doc.page.height - 35, {
        width: pageWidth(doc),
        align: 'center',
        lineBreak: false,
      });
  }
}

const pageWidth = (doc: PDFKit.PDFDocument) => doc.page.width - 2 * MARGIN;
