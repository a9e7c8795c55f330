import { execFile } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

// Run in a child Node: pdfjs-dist is ES modules only, which Jest's CommonJS module system cannot load.
const READER = `
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const pdf = await getDocument({
  data: new Uint8Array(Buffer.concat(chunks)),
  standardFontDataUrl: process.env.PDFJS_FONTS,
  useSystemFonts: false,
  isEvalSupported: false,
}).promise;
const pages = [];
for (let i = 1; i <= pdf.numPages; i++) {
  const content = await (await pdf.getPage(i)).getTextContent();
  pages.push(content.items.map((item) => item.str + (item.hasEOL ? '\\n' : ' ')).join(''));
}
process.stdout.write(JSON.stringify({ pages, info: (await pdf.getMetadata()).info }));
`;

/** What a PDF says, read back by Mozilla's PDF.js (pdfjs-dist): each page's text and the document info. */
export function pdfText(pdf: Uint8Array): Promise<{ pages: string[]; info: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--input-type=module', '-e', READER],
      {
        cwd: ROOT,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, PDFJS_FONTS: path.join(ROOT, 'node_modules/pdfjs-dist/standard_fonts') + path.sep },
      },
      (err, stdout, stderr) =>
        err ? reject(new Error(`pdfjs-dist could not read the PDF: ${stderr || err.message}`)) : resolve(JSON.parse(stdout)),
    );
    child.stdin!.end(Buffer.from(pdf));
  });
}
