import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Hono } from "hono";

const STATIC_DIR = fileURLToPath(new URL("../../static/", import.meta.url));
const SCRIPT_DIR = fileURLToPath(new URL("../viewer/", import.meta.url));
const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".png": "image/png",
};

/**
 * The session viewer: `/` and its assets, read once at start from the package (`static/` and the
 * compiled `dist/viewer/`). Only files listed then are served, by exact name: a request path never
 * reaches the file system.
 */
export function viewerRoutes(app: Hono): void {
  const assets = new Map<string, { body: Buffer; type: string }>();
  const add = (dir: string, name: string) => {
    const type = TYPES[name.slice(name.lastIndexOf("."))];
    if (type !== undefined) assets.set(name, { body: readFileSync(dir + name), type });
  };
  for (const name of readdirSync(STATIC_DIR)) add(STATIC_DIR, name);
  for (const name of readdirSync(SCRIPT_DIR)) if (name.endsWith(".js")) add(SCRIPT_DIR, name);
  const page = assets.get("index.html");
  const headers = (type: string) => ({
    "content-type": type,
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
    "content-security-policy":
      "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  });
  app.get("/", (c) =>
    page === undefined ? c.notFound() : c.body(new Uint8Array(page.body), 200, headers(page.type)),
  );
  app.get("/assets/:name", (c) => {
    const asset = assets.get(c.req.param("name"));
    return asset === undefined ? c.notFound() : c.body(new Uint8Array(asset.body), 200, headers(asset.type));
  });
}
