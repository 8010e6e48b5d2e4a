// WASI preview 1's socket calls. A task has no network: no descriptor is a socket, and none can
// be made (preview 1 has no call that opens one). The calls are served rather than refused at
// upload, so that a program with socket code it never reaches runs, and one that reaches it gets
// the error a host without sockets gives: ENOTSOCK on a file or a pipe (the standard streams,
// though their file type is `socket_stream`, as pipes are in preview 1), EBADF on a descriptor
// that is not open or is a directory (a directory is not a stream a socket call could act on).
import { Errno, WasiError } from "./constants.ts";
import type { HostContext } from "./host-context.ts";

export function sockCalls({ fds }: HostContext) {
  const notSocket = (fd: number): never => {
    if (fds.get(fd).kind === "dir") throw new WasiError(Errno.BADF);
    throw new WasiError(Errno.NOTSOCK);
  };
  return {
    sock_accept(fd: number): void {
      notSocket(fd);
    },
    sock_recv(fd: number): void {
      notSocket(fd);
    },
    sock_send(fd: number): void {
      notSocket(fd);
    },
    sock_shutdown(fd: number): void {
      notSocket(fd);
    },
  };
}
