// npm run audit:verify -- <export.jsonl>: checks a JSON Lines audit export with no database (A2, A5).
// Recomputes every entry's hash and every link, prints the first broken entry exactly (line, id,
// chain, seq, problem) and exits 1 on any break, 2 when the file cannot be read; 0 when it verifies.
import { readFileSync } from 'node:fs';
import { verifyExport } from '@/lib/audit/verify-export.ts';

const file = process.argv[2];
if (!file || process.argv.length > 3) {
  console.error('usage: npm run audit:verify -- <export.jsonl>');
  process.exit(2);
}
let text: string;
try {
  text = readFileSync(file, 'utf8');
} catch (error) {
  console.error(`cannot read ${file}: ${(error as Error).message}`);
  process.exit(2);
}
const result = verifyExport(text);
if (!result.ok) {
  console.log(
    `BROKEN at line ${result.line}: entry ${result.id ?? '?'} (chain ${result.chain ?? '?'}, seq ${result.seq ?? '?'}): ${result.problem}`,
  );
  process.exit(1);
}
console.log(`OK: ${result.entries} entries in ${result.chains} chains verify (hashes and links)`);
for (const p of result.partial)
  console.log(`  partial: chain ${p.chain} holds seq ${p.first_seq}-${p.last_seq}; its first prev_hash is the anchor`);
