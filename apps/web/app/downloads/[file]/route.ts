// /downloads/* is the Market Manager's too: the worker's and the client's npm package tarballs
// (`npx --yes URL/downloads/cyclemarket-worker.tgz`), served on the web app's address like /api.
import { GET as forward } from "../../api/[...path]/route";

export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return forward(req);
}

export function HEAD(req: Request) {
  return forward(req);
}
