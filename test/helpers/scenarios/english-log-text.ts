/**
 * A translated stderr log as the English server would have written it, line by line, for the
 * scenarios' waits (they match English lines): the word after the prefix becomes English and the
 * text after it is read back with the language's matchers; a TAB-led line continues what its
 * entry's previous line was (a report line, a DETAIL line). Lines nothing reads stay as written.
 */
import type { Translator } from '../../../src/parsers/lang/translator.js';

type Role = Parameters<Translator['translateLine']>[1];

const ROLE_OF_WORD: Readonly<Record<string, Role>> = { DETAIL: 'detail', CONTEXT: 'context' };

export function englishLogText(text: string, translator: Translator): string {
  const tokens = [...translator.lineWords.keys()].sort((a, b) => b.length - a.length);
  let role: Role | null = null;
  return text.split('\n').map((line) => {
    if (line.startsWith('\t')) {
      const english = role === null ? null : translator.translateLine(line.slice(1), role === 'message' ? 'report' : role);
      return english === null ? line : `\t${english}`;
    }
    let at = -1;
    let token = '';
    for (const candidate of tokens) {
      const found = line.indexOf(candidate);
      if (found !== -1 && (at === -1 || found < at)) [at, token] = [found, candidate];
    }
    if (at === -1) return line;
    const word = translator.lineWords.get(token) as string;
    role = ROLE_OF_WORD[word] ?? (word === 'HINT' || word === 'STATEMENT' || word === 'QUERY' || word === 'LOCATION' ? null : 'message');
    const rest = line.slice(at + token.length);
    const english = role === 'message' ? translator.translateMessage(rest) : role === null ? rest : (translator.translateLine(rest, role) ?? rest);
    return `${line.slice(0, at)}${word}:  ${english}`;
  }).join('\n');
}
