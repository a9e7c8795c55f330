import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { ROOT } from './launcher';

/** docs/grpc.md, whose Python instructions these tests follow as they are written. */
export const GRPC_DOC = path.join(ROOT, 'docs/grpc.md');

/**
 * The fenced block of docs/grpc.md that follows the comment `<!-- test: <name> (...) -->`, the comment telling a reader
 * which test runs the block as it is written.
 */
export function documentedBlock(name: string): string {
  const doc = fs.readFileSync(GRPC_DOC, 'utf8');
  const at = doc.indexOf(`<!-- test: ${name} `);
  if (at < 0) throw new Error(`docs/grpc.md has no block marked <!-- test: ${name} ... -->`);
  const block = /```[a-z]*\n([\s\S]*?)\n```/.exec(doc.slice(at));
  if (!block) throw new Error(`docs/grpc.md: no fenced block after <!-- test: ${name} ... -->`);
  return block[1];
}

/**
 * Builds the Python stubs exactly as docs/grpc.md says (its `python-stubs` block, run by bash in `dir`, where `proto`
 * is the platform's proto/ directory as a team would have a copy of it), and answers the directory they are in.
 */
export function buildDocumentedStubs(dir: string): string {
  fs.symlinkSync(path.join(ROOT, 'proto'), path.join(dir, 'proto'));
  const run = spawnSync('bash', ['-euo', 'pipefail', '-c', documentedBlock('python-stubs')], { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the documented stub build failed (${run.status}):\n${run.stdout}${run.stderr}`);
  return path.join(dir, 'stubs');
}

/** Runs Python code with the stubs on its path, as docs/grpc.md says to; answers what it printed. */
export function runPython(stubs: string, code: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(PYTHON, ['-'], { input: code, encoding: 'utf8', env: { ...process.env, PYTHONPATH: stubs }, timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Debian's Python, where python3-grpcio is installed (a pyenv python3 on the PATH has no grpc). */
const PYTHON = process.env.PYTHON_GRPC ?? '/usr/bin/python3';

/** What the Python client answers for one call. */
export interface PythonAnswer {
  code: string;
  details: string;
  response?: any;
}

/**
 * Whether the Python client can run here: Debian's python3-grpcio, protoc and grpc_python_plugin (.ci/run installs
 * them). Without them the test is skipped with a notice, except under CI, where it must run.
 */
export function pythonClientAvailable(): boolean {
  const ok =
    spawnSync(PYTHON, ['-c', 'import grpc, google.protobuf'], { stdio: 'ignore' }).status === 0 &&
    spawnSync('protoc', ['--version'], { stdio: 'ignore' }).status === 0 &&
    fs.existsSync('/usr/bin/grpc_python_plugin');
  if (!ok && process.env.CI === 'true')
    throw new Error(`the Python gRPC client needs ${PYTHON} with grpcio, protoc and grpc_python_plugin`);
  if (!ok) console.warn('skipping the Python gRPC client: python3-grpcio, protobuf-compiler or protobuf-compiler-grpc is missing');
  return ok;
}

/** The Python client (deploy/local/test/python-client/grpc_client.py) in a process of its own, one JSON line per call. */
export class PythonClient {
  private nextId = 1;
  private readonly waiting = new Map<number, (answer: PythonAnswer) => void>();
  private stderr = '';

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    /** What `platform.system()` answered in the client once the generated stubs were imported. */
    readonly platformSystem: string,
  ) {}

  /** Starts the client over the stubs in `stubs` (buildDocumentedStubs). */
  static async start(stubs: string): Promise<PythonClient> {
    const child = spawn(PYTHON, [path.join(__dirname, 'python-client', 'grpc_client.py'), stubs], { stdio: 'pipe' });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const lines = readline.createInterface({ input: child.stdout });
    const ready = await new Promise<{ platform_system: string }>((resolve, reject) => {
      lines.once('line', (line) => resolve(JSON.parse(line)));
      child.once('exit', (code) => reject(new Error(`the Python client exited with ${code}: ${stderr}`)));
    });
    const client = new PythonClient(child, ready.platform_system);
    lines.on('line', (line) => {
      const answer = JSON.parse(line) as PythonAnswer & { id: number };
      client.waiting.get(answer.id)?.(answer);
      client.waiting.delete(answer.id);
    });
    child.stderr.on('data', (d) => (client.stderr += String(d)));
    return client;
  }

  /** One unary call, e.g. `call(address, 'platformadmin.authz.v1.AuthzService/Check', {...}, token)`. */
  call(address: string, method: string, request: unknown, token?: string): Promise<PythonAnswer> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, resolve);
      this.child.stdin.write(`${JSON.stringify({ id, address, method, request, token: token ?? null })}\n`, (err) => err && reject(err));
      setTimeout(() => reject(new Error(`the Python client did not answer ${method}: ${this.stderr}`)), 20_000).unref();
    });
  }

  stop(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}
