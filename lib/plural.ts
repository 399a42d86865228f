// A count with its noun as a person writes it: "1 target", "3 targets", "1,204 keys" (never "target(s)").
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? noun : nouns}`;
}
