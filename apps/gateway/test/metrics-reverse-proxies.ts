import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import express from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';

/** A reverse proxy in front of a metrics backend: `/metrics/<uidcid>/<path>` is let through when the hook says 2xx. */
export interface ReverseProxy {
  name: string;
  url: string;
  stop(): Promise<void>;
}

const listen = async (server: http.Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
};

/**
 * nginx with `auth_request`, configured as docs/metrics-proxy.md shows: the hook's X-Scope-OrgID is copied to the
 * upstream request with `auth_request_set`. Undefined when no nginx binary is installed (`apt-get install nginx-light`).
 */
export async function startNginx(gatewayOrigin: string, upstreamOrigin: string): Promise<ReverseProxy | undefined> {
  const bin = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'].find((p) => fs.existsSync(p));
  if (!bin || spawnSync(bin, ['-v']).status !== 0) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nginx-hook-'));
  // A free port: taken and released just before nginx binds it.
  const probe = http.createServer();
  const free = await listen(probe);
  await new Promise((r) => probe.close(r));
  // Addresses, not names: nginx resolves a name in proxy_pass with variables only through a configured resolver.
  const hostOf = (origin: string) => new URL(origin).host.replace(/^localhost:/, '127.0.0.1:');
  const gw = hostOf(gatewayOrigin);
  const up = hostOf(upstreamOrigin);
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  map $request_uri $metrics_hook { ~^/metrics/(?<u>[^/?]+)/(?<r>[^?]*) /api/v1/metricsproxy/auth/$u/$r; }
  server {
    listen 127.0.0.1:${free};
    location ~ ^/metrics/[^/]+/(?<rest>.*)$ {
      auth_request /_metrics_auth;
      auth_request_set $tenant $upstream_http_x_scope_orgid;
      proxy_set_header X-Scope-OrgID $tenant;
      proxy_pass http://${up}/$rest$is_args$args;
    }
    location = /_metrics_auth {
      internal;
      proxy_pass http://${gw}$metrics_hook;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
    }
  }
}
`,
  );
  const child: ChildProcess = spawn(bin, ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${free}`;
  for (let i = 0; i < 50; i++) {
    const up = await fetch(`${url}/`).then(
      () => true,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name: 'nginx auth_request',
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      if (!process.env.KEEP_NGINX_DIR) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A forward-auth reverse proxy from the repo's own packages (express and http-proxy-middleware), doing what
 * Traefik's ForwardAuth does: the original request's headers to the hook, the hook's 401/403 answered as is,
 * `authResponseHeaders` (X-Scope-OrgID) copied to the proxied request. It always runs, nginx or not.
 */
export async function startForwardAuthProxy(gatewayOrigin: string, upstreamOrigin: string): Promise<ReverseProxy> {
  const app = express();
  app.use('/metrics/:uidcid', async (req, res, next) => {
    const hook = await fetch(`${gatewayOrigin}/api/v1/metricsproxy/auth/${req.params.uidcid}${req.path}`, {
      headers: { ...(req.headers.authorization && { authorization: req.headers.authorization }), 'x-forwarded-uri': req.originalUrl },
    });
    await hook.arrayBuffer();
    if (!hook.ok) return void res.status(hook.status).end();
    req.headers['x-scope-orgid'] = hook.headers.get('x-scope-orgid') ?? '';
    next();
  });
  app.use('/metrics/:uidcid', createProxyMiddleware({ target: upstreamOrigin, changeOrigin: true }));
  const server = http.createServer(app);
  const port = await listen(server);
  return {
    name: 'forward-auth (express + http-proxy-middleware)',
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise((r) => server.close(() => r())),
  };
}

/** The metrics backend behind the proxies: answers what it received (path and tenant header). */
export async function startEchoUpstream(): Promise<{ url: string; hits: () => number; stop(): Promise<void> }> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ path: req.url, tenant: req.headers['x-scope-orgid'] ?? null }));
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, hits: () => hits, stop: () => new Promise((r) => server.close(() => r())) };
}

/**
 * Through `proxy` to `upstream`: `member`'s query reaches the backend with the hook's tenant header; `stranger`'s
 * and an anonymous one are 401 and never reach it.
 */
export async function expectOnlyMembersThrough(
  proxy: ReverseProxy,
  upstream: Awaited<ReturnType<typeof startEchoUpstream>>,
  uidcid: string,
  tokens: { member: string; stranger: string },
): Promise<void> {
  const query = `${proxy.url}/metrics/${uidcid}/api/v1/query?query=up`;
  const member = await fetch(query, { headers: { authorization: `token ${tokens.member}` } });
  expect({ proxy: proxy.name, status: member.status }).toEqual({ proxy: proxy.name, status: 200 });
  expect(await member.json()).toEqual({ path: '/api/v1/query?query=up', tenant: uidcid });
  const hits = upstream.hits();
  const stranger = await fetch(query, { headers: { authorization: `token ${tokens.stranger}` } });
  expect({ proxy: proxy.name, status: stranger.status }).toEqual({ proxy: proxy.name, status: 401 });
  expect((await fetch(query)).status).toBe(401);
  expect(upstream.hits()).toBe(hits);
}
