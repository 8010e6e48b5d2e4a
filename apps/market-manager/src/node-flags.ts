/**
 * Node's options for the Market Manager's process (`npm start` and the benches start it so).
 *
 * A young generation of 64 MB a half instead of Node's 16: the manager allocates a little for
 * every call and every task (requests, answers, rows), and with the default the garbage collector's
 * scavenges took about twice the share of its thread under bench:dispatch, each pause one the
 * event loop waits for. It holds more memory, well within the 1 GB one manager is to need at
 * 10,000 machines (bench:load --heartbeat-only measures it). The benches' own process (the load generator,
 * package.json `bench:dispatch` and `bench:load`) is started with the same size, written there.
 */
export const MANAGER_NODE_FLAGS = ["--max-semi-space-size=64"];
