/** `text` wrapped at word boundaries into lines of at most `width` characters (a longer word stays whole). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** Every line of `text` longer than `width` wrapped, its continuation lines indented like it plus two. */
export function wrapLines(text: string, width: number): string {
  return text
    .split('\n')
    .flatMap((line) => {
      if (line.length <= width) return [line];
      const indent = /^\s*/.exec(line)![0];
      const [first = '', ...rest] = wrap(line, width - indent.length - 2);
      return [indent + first, ...rest.map((l) => `${indent}  ${l}`)];
    })
    .join('\n');
}
