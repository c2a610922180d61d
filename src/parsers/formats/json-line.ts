/** The JSON object a line holds; null when it holds anything else (an array, a number, not JSON). */
export function jsonObjectOf(text: string): Record<string, unknown> | null {
  if (text.charCodeAt(0) !== 123 /* { */) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}
