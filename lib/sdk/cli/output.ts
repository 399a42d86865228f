// What the CLI prints: a plain table for people, or the server's JSON with --json for scripts.
export interface Out {
  json: boolean;
  write(text: string): void;
}

/** A table of rows with the named columns, each as wide as its widest cell. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cell = (v: unknown) =>
    v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

/** Prints `data` as JSON with --json, else as the human form. */
export function show(out: Out, data: unknown, human: () => string): void {
  out.write(out.json ? `${JSON.stringify(data, null, 2)}\n` : human());
}
