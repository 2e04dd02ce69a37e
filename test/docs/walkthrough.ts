// Reads the steps of a walkthrough written in Markdown, so that a test can carry them out as a reader would.
//
// A step is an HTML comment `<!-- walkthrough: <action> <arguments> -->`, followed by the fenced code
// block it uses, if it uses one:
//   create <file>                  the block is the file's whole text
//   insert-after <file> <line>     the block goes after the first line of <file> equal to <line>
//   append <file>                  the block goes at the end of <file>
//   succeeds <command>             <command> exits 0
//   fails <command>                <command> exits non-zero, and prints the block (when there is one)

export type WalkthroughStep =
  | { action: 'create'; file: string; text: string }
  | { action: 'append'; file: string; text: string }
  | { action: 'insert-after'; file: string; line: string; text: string }
  | { action: 'succeeds'; command: string }
  | { action: 'fails'; command: string; output?: string };

const STEP = /<!-- walkthrough: (create|insert-after|append|succeeds|fails) (.+?) -->\n(?:\n?```[a-z]*\n([\s\S]*?)\n```)?/g;

export function readWalkthrough(markdown: string): WalkthroughStep[] {
  const steps: WalkthroughStep[] = [];
  for (const match of markdown.matchAll(STEP)) {
    const [, action, argumentText = '', block] = match;
    const text = block === undefined ? undefined : `${block}\n`;
    if (action === 'succeeds') steps.push({ action, command: argumentText });
    else if (action === 'fails') steps.push({ action, command: argumentText, output: block });
    else if (text === undefined) throw new Error(`walkthrough step "${action} ${argumentText}" has no code block after it`);
    else if (action === 'insert-after') {
      const [file = '', ...line] = argumentText.split(' ');
      steps.push({ action, file, line: line.join(' '), text });
    } else steps.push({ action: action === 'create' ? 'create' : 'append', file: argumentText, text });
  }
  return steps;
}

/** The files a reader edits or creates by hand. */
export function editedFiles(steps: readonly WalkthroughStep[]): string[] {
  return [...new Set(steps.flatMap((step) => ('file' in step ? [step.file] : [])))];
}
