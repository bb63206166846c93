import { PathChangedError, PathNotVerifiableError } from "./checked-open.js";
import { MAX_FILE_BYTES } from "./text.js";

/** Longest path quoted back in a message; an over-long path is what some of them are about. */
const MAX_QUOTED_PATH = 200;

/**
 * A file-system error as one sentence the model can act on, naming the path as it gave it and
 * never anything read from a file: every errno has one, so no fs tool throws for an ordinary
 * file-system error.
 */
export function fsErrorMessage(error: unknown, shown: string): string {
  if (PathChangedError.isInstance(error) || PathNotVerifiableError.isInstance(error)) return error.message;
  const path = `"${shown.length > MAX_QUOTED_PATH ? `${shown.slice(0, MAX_QUOTED_PATH)}…` : shown}"`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return `${path} does not exist`;
    case "EISDIR":
      return `${path} is a directory; use glob to list it`;
    case "ENOTDIR":
    case "EEXIST": // from creating the parent directories: a file is in the way
      return `a parent of ${path} is not a directory`;
    case "ENAMETOOLONG":
      return `${path} is too long for the file system (a name over 255 bytes, or a whole path over 4096); use a shorter path`;
    case "ELOOP":
      return `${path} goes through too many symbolic links (a symlink loop?)`;
    case "EACCES":
    case "EPERM":
      return `the operating system refused access to ${path} (${code}); its permissions do not let the pod's user in`;
    case "EMFILE":
    case "ENFILE":
      return `${path} could not be opened: too many files are open (${code}); try again when fewer tools run at once`;
    case "ENXIO":
    case "EAGAIN":
      return notRegular(shown);
    case "EROFS":
      return `${path} is on a read-only file system`;
    case "ENOSPC":
    case "EDQUOT":
      return `no space left to write ${path} (${code})`;
    case "EFBIG":
      return `${path} is larger than the file tools read (${MAX_FILE_BYTES} bytes)`;
    case "ETXTBSY":
    case "EBUSY":
      return `${path} is busy (${code}); try again later`;
    default:
      return `cannot access ${path}: ${code ?? (error instanceof Error ? error.message : String(error))}`;
  }
}

/** The refusal for a FIFO, socket or device: reading one could wait forever or never end. */
export function notRegular(shown: string): string {
  return `"${shown}" is not a regular file (a FIFO, socket or device); the file tools read and write regular files only`;
}
