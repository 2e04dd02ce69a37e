// npm run check:promises — lists every statement that drops a promise: a call whose value is a
// Promise and that nobody awaits, returns, voids or hands a rejection handler. Since the stores
// answer asynchronously (issue 16), a forgotten await is a write that may land after its answer, or
// a failure nobody sees; the type check cannot tell, this can. `void promise` says it is meant.
import path from 'node:path';
import ts from 'typescript';

const usage = `Usage: npm run check:promises [-- --project tsconfig.json]

Type-checks the project and lists every expression statement whose value is a promise that is
neither awaited, returned, voided (\`void p\`) nor given a rejection handler (\`p.catch(…)\`,
\`p.then(…, onRejected)\`). Exits 1 when it finds one.`;

function main(argv: string[]): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const projectIndex = argv.indexOf('--project');
  const configPath = path.resolve(projectIndex >= 0 ? argv[projectIndex + 1] ?? '' : 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error(`cannot read ${configPath}`);
  const program = ts.createProgram(config.fileNames, config.options);
  const checker = program.getTypeChecker();
  const findings = program
    .getSourceFiles()
    .filter((source) => !source.isDeclarationFile && !source.fileName.includes('/node_modules/'))
    .flatMap((source) => droppedPromises(source, checker));
  for (const finding of findings) process.stdout.write(`${finding}\n`);
  process.stdout.write(findings.length === 0 ? 'No dropped promises.\n' : `${findings.length} dropped promise(s): await them, return them, or write void where dropping is meant.\n`);
  return findings.length === 0 ? 0 : 1;
}

function droppedPromises(source: ts.SourceFile, checker: ts.TypeChecker): string[] {
  const findings: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isExpressionStatement(node) && isDropped(node.expression, checker)) {
      const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
      const text = node.getText(source).replace(/\s+/g, ' ');
      findings.push(`${path.relative(process.cwd(), source.fileName)}:${line + 1}:${character + 1}: ${text.length > 100 ? `${text.slice(0, 97)}...` : text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

function isDropped(expression: ts.Expression, checker: ts.TypeChecker): boolean {
  if (ts.isAwaitExpression(expression) || ts.isVoidExpression(expression)) return false;
  // `x = promise` keeps it; `a ??= b` too.
  if (ts.isBinaryExpression(expression) && expression.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && expression.operatorToken.kind <= ts.SyntaxKind.LastAssignment) return false;
  if (ts.isCallExpression(expression) && ts.isPropertyAccessExpression(expression.expression)) {
    const method = expression.expression.name.text;
    if (method === 'catch' || (method === 'then' && expression.arguments.length >= 2)) return false;
  }
  return isPromise(checker.getTypeAtLocation(expression));
}

function isPromise(type: ts.Type): boolean {
  if (type.isUnion()) return type.types.some(isPromise);
  return type.getSymbol()?.getName() === 'Promise';
}

process.exitCode = main(process.argv.slice(2));
