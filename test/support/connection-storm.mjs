// A busy machine's loopback traffic, as a separate process: `count` connections held open, and
// a churn of short connections opened and closed all the time, each one taking an ephemeral
// port from the kernel. Prints "holding N" once the held connections are open.
import { createServer, connect } from "node:net";

const want = Number(process.argv[2] ?? 3000);
const churnPerTick = Number(process.argv[3] ?? 50);
const server = createServer((socket) => socket.on("error", () => {}));
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address();

const open = (keep) =>
  new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      if (!keep) socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

let held = 0;
for (let i = 0; i < want; i += 100) {
  const batch = await Promise.all(Array.from({ length: Math.min(100, want - i) }, () => open(true)));
  held += batch.filter(Boolean).length;
}
console.log(`holding ${held}`);

let churned = 0;
const tick = async () => {
  churned += (await Promise.all(Array.from({ length: churnPerTick }, () => open(false)))).filter(Boolean).length;
  setTimeout(tick, 5);
};
void tick();
setInterval(() => console.log(`churned ${churned}`), 2000);
