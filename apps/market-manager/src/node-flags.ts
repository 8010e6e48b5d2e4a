/**
 * Node's options for the Market Manager's process (`npm start` and the benches start it so).
 *
 * A young generation of 64 MB a half instead of Node's 16: the manager allocates a little for
 * every call and every task (requests, answers, rows), and with the default the garbage collector's
 * scavenges took 10.7-10.9% of its thread under bench:dispatch (a CPU profile of 30,000 tasks),
 * 4.8-7.1% with this, each pause one the event loop waits for. It holds about 150 MB more memory
 * (bench:load --heartbeat-only, 10,000 machines: peak RSS 599 MB, 442 in the run before it), well within
 * the 1 GB one manager is to need at 10,000 machines. The benches' own process (the load generator,
 * package.json `bench:dispatch` and `bench:load`) is started with the same size, written there.
 */
export const MANAGER_NODE_FLAGS = ["--max-semi-space-size=64"];
