// The server names the field a refusal is about at the start of its message ("confirmPassword: the
// two passwords differ"), which HTTP clients need. Next to the field in the console the person reads
// the message alone, and a message shown elsewhere names the field by its label, not its internal id.

/** The message without its field id, or with the field's label in its place. */
export function fieldMessage(message: string, field: string | undefined, label?: string): string {
  if (!field) return message;
  const prefix = `${field}: `;
  if (!message.startsWith(prefix)) return message;
  const rest = message.slice(prefix.length);
  return label ? `${label}: ${rest}` : rest.charAt(0).toUpperCase() + rest.slice(1);
}
