// The last head a signer (the ledger's, or a witness) signed, kept in a file beside its key and never
// in the database: whoever owns the database can rewrite the trail and the tree, but not this file, so
// the signer can always tell whether a new head extends what it signed before. The file holds the
// signed note itself, and is replaced atomically (write a temporary file, flush it, rename it over),
// so a crash leaves the old head or the new one, never half of one.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync, existsSync } from 'node:fs';
import path from 'node:path';

export function readStateNote(file: string): string | null {
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}

export function writeStateNote(file: string, note: string): void {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, note);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
  // The rename itself is durable only once the directory is flushed.
  const dir = openSync(path.dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
