// Numbers of the WASI preview 1 ABI (witx `typenames.witx`), named once so the calls read
// like the specification.

export const Errno = {
  SUCCESS: 0,
  TOOBIG: 1,
  ACCES: 2,
  AGAIN: 6,
  BADF: 8,
  EXIST: 20,
  FAULT: 21,
  FBIG: 22,
  ILSEQ: 25,
  INVAL: 28,
  IO: 29,
  ISDIR: 31,
  LOOP: 32,
  MFILE: 33,
  NAMETOOLONG: 37,
  NOENT: 44,
  NOSPC: 51,
  NOSYS: 52,
  NOTDIR: 54,
  NOTEMPTY: 55,
  NOTSOCK: 57,
  NOTSUP: 58,
  OVERFLOW: 61,
  PERM: 63,
  ROFS: 69,
  SPIPE: 70,
  XDEV: 75,
  NOTCAPABLE: 76,
} as const;
export type Errno = (typeof Errno)[keyof typeof Errno];

/** Raised inside the file system and descriptor code; the call boundary turns it into its errno. */
export class WasiError extends Error {
  constructor(readonly errno: Errno) {
    super(`wasi errno ${errno}`);
  }
}

export const Filetype = {
  UNKNOWN: 0,
  BLOCK_DEVICE: 1,
  CHARACTER_DEVICE: 2,
  DIRECTORY: 3,
  REGULAR_FILE: 4,
  SOCKET_DGRAM: 5,
  SOCKET_STREAM: 6,
  SYMBOLIC_LINK: 7,
} as const;

const bit = (n: number) => 1n << BigInt(n);
export const Rights = {
  FD_DATASYNC: bit(0),
  FD_READ: bit(1),
  FD_SEEK: bit(2),
  FD_FDSTAT_SET_FLAGS: bit(3),
  FD_SYNC: bit(4),
  FD_TELL: bit(5),
  FD_WRITE: bit(6),
  FD_ADVISE: bit(7),
  FD_ALLOCATE: bit(8),
  PATH_CREATE_DIRECTORY: bit(9),
  PATH_CREATE_FILE: bit(10),
  PATH_LINK_SOURCE: bit(11),
  PATH_LINK_TARGET: bit(12),
  PATH_OPEN: bit(13),
  FD_READDIR: bit(14),
  PATH_READLINK: bit(15),
  PATH_RENAME_SOURCE: bit(16),
  PATH_RENAME_TARGET: bit(17),
  PATH_FILESTAT_GET: bit(18),
  PATH_FILESTAT_SET_SIZE: bit(19),
  PATH_FILESTAT_SET_TIMES: bit(20),
  FD_FILESTAT_GET: bit(21),
  FD_FILESTAT_SET_SIZE: bit(22),
  FD_FILESTAT_SET_TIMES: bit(23),
  PATH_SYMLINK: bit(24),
  PATH_REMOVE_DIRECTORY: bit(25),
  PATH_UNLINK_FILE: bit(26),
  POLL_FD_READWRITE: bit(27),
  SOCK_SHUTDOWN: bit(28),
  SOCK_ACCEPT: bit(29),
} as const;

const any = (...rights: bigint[]) => rights.reduce((a, b) => a | b, 0n);
const R = Rights;

/** What a regular file descriptor may do at most; narrowed by how it was opened. */
export const REGULAR_FILE_RIGHTS = any(
  R.FD_DATASYNC, R.FD_READ, R.FD_SEEK, R.FD_FDSTAT_SET_FLAGS, R.FD_SYNC, R.FD_TELL, R.FD_WRITE, R.FD_ADVISE,
  R.FD_ALLOCATE, R.FD_FILESTAT_GET, R.FD_FILESTAT_SET_SIZE, R.FD_FILESTAT_SET_TIMES, R.POLL_FD_READWRITE,
);
/** What a directory descriptor may do at most. */
export const DIRECTORY_RIGHTS = any(
  R.FD_FDSTAT_SET_FLAGS, R.FD_SYNC, R.FD_ADVISE, R.PATH_CREATE_DIRECTORY, R.PATH_CREATE_FILE, R.PATH_LINK_SOURCE,
  R.PATH_LINK_TARGET, R.PATH_OPEN, R.FD_READDIR, R.PATH_READLINK, R.PATH_RENAME_SOURCE, R.PATH_RENAME_TARGET,
  R.PATH_FILESTAT_GET, R.PATH_FILESTAT_SET_SIZE, R.PATH_FILESTAT_SET_TIMES, R.FD_FILESTAT_GET, R.FD_FILESTAT_SET_TIMES,
  R.PATH_SYMLINK, R.PATH_REMOVE_DIRECTORY, R.PATH_UNLINK_FILE, R.POLL_FD_READWRITE,
);
/** Rights a directory hands down to what is opened beneath it. */
export const DIRECTORY_INHERITING_RIGHTS = DIRECTORY_RIGHTS | REGULAR_FILE_RIGHTS;
/**
 * A pipe: read or write in sequence, no seeking. WASI has no pipe file type; the reference host
 * presents a pipe as a stream socket with these rights, and so do we.
 */
export const PIPE_RIGHTS = any(R.FD_READ, R.FD_FDSTAT_SET_FLAGS, R.FD_WRITE, R.FD_FILESTAT_GET, R.POLL_FD_READWRITE, R.SOCK_SHUTDOWN, R.SOCK_ACCEPT);
/** Rights that change a file's contents; a read-only descriptor never holds them. */
export const WRITE_RIGHTS = any(R.FD_DATASYNC, R.FD_WRITE, R.FD_ALLOCATE, R.FD_FILESTAT_SET_SIZE);
export const READ_RIGHTS = any(R.FD_READ, R.FD_READDIR);

export const Fdflags = { APPEND: 1, DSYNC: 2, NONBLOCK: 4, RSYNC: 8, SYNC: 16 } as const;
export const Oflags = { CREAT: 1, DIRECTORY: 2, EXCL: 4, TRUNC: 8 } as const;
export const LOOKUP_SYMLINK_FOLLOW = 1;
export const Fstflags = { ATIM: 1, ATIM_NOW: 2, MTIM: 4, MTIM_NOW: 8 } as const;
export const Whence = { SET: 0, CUR: 1, END: 2 } as const;
export const Clock = { REALTIME: 0, MONOTONIC: 1, PROCESS_CPUTIME: 2, THREAD_CPUTIME: 3 } as const;
export const Eventtype = { CLOCK: 0, FD_READ: 1, FD_WRITE: 2 } as const;
export const SUBCLOCKFLAGS_ABSTIME = 1;
export const PREOPENTYPE_DIR = 0;

// Byte sizes and field offsets of the ABI's structures.
export const FILESTAT_BYTES = 64;
export const DIRENT_BYTES = 24;
export const SUBSCRIPTION_BYTES = 48;
export const EVENT_BYTES = 32;
