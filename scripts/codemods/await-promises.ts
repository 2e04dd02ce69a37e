// A codemod for the move of the stores to asynchronous interfaces (issue 16): in the files given,
// awaits every call of the project's own functions whose value is now a Promise and that nobody
// awaits, returns or hands on, and marks the enclosing function async (wrapping a declared return
// type in Promise<>); `expect(() => p).toThrow(x)` and `expect(fn).toThrow(x)` become
// `await expect(p).rejects.toThrow(x)`. Callbacks of calls other than it/test/before*/after* are
// reported, not changed: making a .map or .forEach callback async changes what it does.
// Review its diff: a promise kept on purpose (started now, awaited later) gets awaited too.
//
// Usage: npx tsx scripts/codemods/await-promises.ts tsconfig.json <file>...
// Repeat on the files `npx tsc --noEmit` names until it reports 0 edits; then npm run check:promises.
import ts from 'typescript';
import path from 'node:path';
import fs from 'node:fs';

const [configPath, ...fileArgs] = process.argv.slice(2);
const files = new Set(fileArgs.map((f) => path.resolve(f)));
const config = ts.getParsedCommandLineOfConfigFile(path.resolve(configPath!), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
const program = ts.createProgram(config.fileNames, config.options);
const checker = program.getTypeChecker();

const isPromiseType = (type: ts.Type): boolean => {
  if (type.isUnion()) return type.types.some(isPromiseType);
  const name = type.getSymbol()?.getName();
  return name === 'Promise';
};

/** Only calls of the project's own functions: a library's promise (fetch, timers) was a promise before. */
const declaredInProject = (call: ts.CallExpression): boolean => {
  const declaration = checker.getResolvedSignature(call)?.getDeclaration();
  const file = declaration?.getSourceFile().fileName ?? '';
  return file !== '' && !file.includes('node_modules') && !file.endsWith('.d.ts');
};

type Edit = { start: number; end: number; text: string };
let total = 0;
const reports: string[] = [];
const okCallbacks = new Set(['it', 'test', 'beforeEach', 'afterEach', 'beforeAll', 'afterAll']);

for (const source of program.getSourceFiles()) {
  if (!files.has(path.resolve(source.fileName))) continue;
  const edits: Edit[] = [];
  const asyncMarked = new Set<ts.Node>();
  const where = (node: ts.Node) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart());
    return `${path.relative(process.cwd(), source.fileName)}:${line + 1}`;
  };
  const enclosingFunction = (node: ts.Node): ts.FunctionLikeDeclaration | undefined => {
    let current = node.parent;
    while (current && !ts.isFunctionLike(current)) current = current.parent;
    return current as ts.FunctionLikeDeclaration | undefined;
  };
  const markAsync = (fn: ts.FunctionLikeDeclaration | undefined, at: ts.Node): boolean => {
    if (!fn) return true; // top level: ESM allows await
    if (fn.modifiers?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword)) return true;
    if (asyncMarked.has(fn)) return true;
    const parent = fn.parent;
    if ((ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) && ts.isCallExpression(parent) && parent.arguments.includes(fn as ts.Expression)) {
      const callee = parent.expression;
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
      const base = ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) ? callee.expression.text : '';
      if (!okCallbacks.has(name) && !okCallbacks.has(base)) {
        reports.push(`${where(at)}: a promise inside a callback of ${name || callee.getText(source)}() — fix by hand`);
        return false;
      }
    }
    if (ts.isGetAccessor(fn) || ts.isSetAccessor(fn) || ts.isConstructorDeclaration(fn)) {
      reports.push(`${where(at)}: a promise inside an accessor/constructor — fix by hand`);
      return false;
    }
    asyncMarked.add(fn);
    const exported = fn.modifiers?.filter((m) => m.kind === ts.SyntaxKind.ExportKeyword || m.kind === ts.SyntaxKind.DefaultKeyword) ?? [];
    const insertAt = exported.length > 0 ? exported[exported.length - 1]!.getEnd() + 1 : fn.getStart(source);
    edits.push({ start: insertAt, end: insertAt, text: 'async ' });
    if (fn.type && !/^Promise</.test(fn.type.getText(source))) {
      edits.push({ start: fn.type.getStart(source), end: fn.type.getStart(source), text: 'Promise<' });
      edits.push({ start: fn.type.getEnd(), end: fn.type.getEnd(), text: '>' });
    }
    return true;
  };
  // An await already written where the function is not async (TS1308): mark the function.
  for (const diagnostic of program.getSemanticDiagnostics(source)) {
    if (diagnostic.code !== 1308 || diagnostic.start === undefined) continue;
    let node: ts.Node | undefined = findNode(source, diagnostic.start);
    if (node) markAsync(enclosingFunction(node), node);
  }
  const visit = (node: ts.Node): void => {
    // expect(() => p).toThrow(x)  →  await expect(p).rejects.toThrow(x)
    if (
      ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'expect' && node.arguments.length === 1 &&
      ts.isArrowFunction(node.arguments[0]!) && !ts.isBlock((node.arguments[0] as ts.ArrowFunction).body)
    ) {
      const arrow = node.arguments[0] as ts.ArrowFunction;
      const body = arrow.body as ts.Expression;
      if (isPromiseType(checker.getTypeAtLocation(body)) && ts.isPropertyAccessExpression(node.parent) && !ts.isAwaitExpression(node.parent.parent.parent)) {
        const matcher = node.parent.name.text;
        if (matcher === 'toThrow' || matcher === 'toThrowError') {
          if (markAsync(enclosingFunction(node), node)) {
            edits.push({ start: node.getStart(source), end: node.getStart(source), text: 'await ' });
            edits.push({ start: arrow.getStart(source), end: body.getStart(source), text: '' });
            edits.push({ start: node.getEnd(), end: node.getEnd(), text: '.rejects' });
          }
          return;
        }
        reports.push(`${where(node)}: expect(() => promise).${matcher} — fix by hand`);
        return;
      }
    }
    // expect(fn).toThrow(x), fn returning a promise  →  await expect(fn()).rejects.toThrow(x)
    if (
      ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'expect' && node.arguments.length === 1 &&
      ts.isIdentifier(node.arguments[0]!) && ts.isPropertyAccessExpression(node.parent) && ['toThrow', 'toThrowError'].includes(node.parent.name.text)
    ) {
      const signatures = checker.getTypeAtLocation(node.arguments[0]!).getCallSignatures();
      if (signatures.length > 0 && isPromiseType(signatures[0]!.getReturnType()) && markAsync(enclosingFunction(node), node)) {
        edits.push({ start: node.getStart(source), end: node.getStart(source), text: 'await ' });
        edits.push({ start: node.arguments[0]!.getEnd(), end: node.arguments[0]!.getEnd(), text: '()' });
        edits.push({ start: node.getEnd(), end: node.getEnd(), text: '.rejects' });
        return;
      }
    }
    if (ts.isCallExpression(node) && isPromiseType(checker.getTypeAtLocation(node)) && declaredInProject(node)) {
      const parent = node.parent;
      const handedOn =
        ts.isAwaitExpression(parent) || ts.isReturnStatement(parent) || ts.isArrayLiteralExpression(parent) ||
        (ts.isArrowFunction(parent) && parent.body === node) ||
        (ts.isPropertyAccessExpression(parent) && ['then', 'catch', 'finally'].includes(parent.name.text)) ||
        (ts.isCallExpression(parent) && ts.isIdentifier(parent.expression) && parent.expression.text === 'expect') ||
        ts.isVoidExpression(parent) || ts.isParenthesizedExpression(parent) && ts.isAwaitExpression(parent.parent);
      if (!handedOn) {
        if (markAsync(enclosingFunction(node), node)) {
          const bare = ts.isExpressionStatement(parent) || (ts.isVariableDeclaration(parent) && parent.initializer === node) || (ts.isCallExpression(parent) && parent.arguments.includes(node)) || ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken && parent.right === node;
          if (bare) edits.push({ start: node.getStart(source), end: node.getStart(source), text: 'await ' });
          else {
            edits.push({ start: node.getStart(source), end: node.getStart(source), text: '(await ' });
            edits.push({ start: node.getEnd(), end: node.getEnd(), text: ')' });
          }
        }
      } else if (ts.isCallExpression(parent) && ts.isIdentifier(parent.expression) && parent.expression.text === 'expect' && ts.isPropertyAccessExpression(parent.parent)) {
        const matcher = parent.parent.name.text;
        if (matcher !== 'resolves' && matcher !== 'rejects' && !ts.isAwaitExpression(parent.parent.parent.parent)) {
          if (markAsync(enclosingFunction(node), node)) edits.push({ start: node.getStart(source), end: node.getStart(source), text: 'await ' });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (edits.length === 0) continue;
  let text = source.getFullText();
  for (const edit of edits.sort((a, b) => b.start - a.start || b.end - a.end)) text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
  fs.writeFileSync(source.fileName, text);
  total += edits.length;
  console.log(`${path.relative(process.cwd(), source.fileName)}: ${edits.length} edits`);
}
for (const line of reports) console.log(line);
console.log(`edits: ${total}`);

function findNode(source: ts.SourceFile, position: number): ts.Node | undefined {
  let found: ts.Node | undefined;
  const visit = (node: ts.Node) => {
    if (position >= node.getStart(source) && position < node.getEnd()) {
      found = node;
      ts.forEachChild(node, visit);
    }
  };
  visit(source);
  return found;
}
