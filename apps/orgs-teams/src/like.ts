/** A LIKE pattern matching `text` anywhere, its own `%`, `_` and `\` taken literally. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
