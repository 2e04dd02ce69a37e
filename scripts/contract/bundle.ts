// A small deterministic `$ref` bundler for specs split into files (no network, no third-party resolver).
//
// - A `$ref` to another file (`./x.yaml` or `./x.yaml#/pointer`) is inlined where it stands, resolved
//   relative to the file that contains it, recursively.
// - A `$ref` into the API's root `openapi.yaml` (`../openapi.yaml#/components/schemas/Asset`) becomes the
//   internal reference `#/components/schemas/Asset`; the root's own component entries that point at files are
//   inlined, so the bundled document carries every component and only internal references.
// Problems (missing files, missing targets, cycles, remote refs) are collected, not thrown one by one.

import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { isJsonObject, pointerOf, resolvePointer, type JsonObject, type JsonValue } from './document.js';
import { ContractBuildError, type ContractProblem } from './problems.js';
import { expandEnumSources } from './enumSources.js';

export interface BundledSpec {
  /** Absolute path of the root `openapi.yaml`. */
  rootFile: string;
  /** The root file relative to the display base, e.g. `specs/portfolio/openapi.yaml`. */
  rootLabel: string;
  document: JsonObject;
  /**
   * JSON pointers in the bundled document at which the content of another spec file was inlined, mapped to
   * that file (relative to the display base). Used to name the file an author has to edit.
   */
  sources: ReadonlyMap<string, string>;
}

export interface BundleOptions {
  /** File names in problems and `sources` are relative to this directory (default: the current directory). */
  displayBase?: string;
}

/** Keys that may stand next to a `$ref` to another file; they override the inlined object's own. */
const OVERRIDABLE_SIBLINGS = new Set(['summary', 'description']);

/** Bundles the spec rooted at `rootFile`; throws a ContractBuildError listing every reference problem. */
export function bundleSpec(rootFile: string, options: BundleOptions = {}): BundledSpec {
  const bundler = new Bundler(path.resolve(rootFile), path.resolve(options.displayBase ?? process.cwd()));
  const bundled = bundler.run();
  // `x-enum-source` lists (ISO 4217 currency codes) are written in here, so that every reader of the bundle sees them.
  const expanded = expandEnumSources(bundled.document, bundled.rootLabel);
  const problems = [...bundler.problems, ...expanded.problems];
  if (problems.length > 0) {
    // A file inlined at several places would repeat its problems once per place.
    const unique = new Map(problems.map((problem) => [JSON.stringify(problem), problem]));
    throw new ContractBuildError([...unique.values()]);
  }
  return { ...bundled, document: expanded.document };
}

/** The file that holds the content at `pointer` of the bundled document (relative to the display base). */
export function sourceFileOf(bundled: BundledSpec, pointer: string): string {
  let best = bundled.rootLabel;
  let bestLength = -1;
  for (const [prefix, file] of bundled.sources) {
    if ((pointer === prefix || pointer.startsWith(prefix + '/')) && prefix.length > bestLength) {
      best = file;
      bestLength = prefix.length;
    }
  }
  return best;
}

interface InternalRef {
  ref: string;
  file: string;
  /** The `$ref` as written in the file. */
  written: string;
}

/**
 * Valid YAML texts already parsed in this process, by their text: a process that bundles again (npm run dev after a
 * save, the release and check steps, the compiler's own tests) parses again only the files that changed. Parsing
 * YAML was a quarter of a bundle's time. Cleared whole when full.
 */
const parsedTexts = new Map<string, JsonValue>();
const PARSED_TEXTS_KEPT = 1_000;

class Bundler {
  readonly problems: ContractProblem[] = [];
  /** Parsed files; null when the file is missing or not valid YAML. */
  private readonly parsed = new Map<string, JsonValue | null>();
  private readonly missing = new Set<string>();
  private readonly sources = new Map<string, string>();
  private readonly internalRefs: InternalRef[] = [];

  constructor(
    private readonly rootFile: string,
    private readonly displayBase: string,
  ) {}

  run(): BundledSpec {
    const root = this.load(this.rootFile);
    let document: JsonObject = {};
    if (root !== undefined) {
      if (!isJsonObject(root)) {
        this.problems.push({ file: this.label(this.rootFile), message: 'the root document is not a YAML mapping' });
      } else {
        const walked = this.walk(root, this.rootFile, [], []);
        if (isJsonObject(walked)) document = walked;
      }
    }
    this.checkInternalRefs(document);
    return { rootFile: this.rootFile, rootLabel: this.label(this.rootFile), document, sources: this.sources };
  }

  private label(file: string): string {
    return path.relative(this.displayBase, file).split(path.sep).join('/');
  }

  /** Parses a YAML (or JSON) file once; undefined when it is missing or unreadable (a problem is recorded). */
  private load(file: string, referrer?: { file: string; ref: string }): JsonValue | undefined {
    const cached = this.parsed.get(file);
    if (cached !== undefined && cached !== null) return cached;
    // A missing file is reported once per referring $ref; a file with YAML errors only once.
    if (cached === null && !this.missing.has(file)) return undefined;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      this.parsed.set(file, null);
      this.missing.add(file);
      this.problems.push(
        referrer
          ? {
              file: this.label(referrer.file),
              where: `$ref ${referrer.ref}`,
              message: `the referenced file ${this.label(file)} does not exist`,
            }
          : { file: this.label(file), message: 'the file does not exist' },
      );
      return undefined;
    }
    const parsedBefore = parsedTexts.get(text);
    if (parsedBefore !== undefined) {
      const value = structuredClone(parsedBefore);
      this.parsed.set(file, value);
      return value;
    }
    const yamlDocument = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: true });
    if (yamlDocument.errors.length > 0) {
      this.parsed.set(file, null);
      for (const error of yamlDocument.errors) {
        this.problems.push({ file: this.label(file), message: `invalid YAML: ${error.message.split('\n')[0]}` });
      }
      return undefined;
    }
    const value = yamlDocument.toJS() as JsonValue;
    if (parsedTexts.size >= PARSED_TEXTS_KEPT) parsedTexts.clear();
    parsedTexts.set(text, structuredClone(value));
    this.parsed.set(file, value);
    return value;
  }

  /** Returns a fresh copy of `node` with every file reference inlined and every root reference made internal. */
  private walk(node: JsonValue, file: string, at: string[], stack: string[]): JsonValue {
    if (Array.isArray(node)) return node.map((item, index) => this.walk(item, file, [...at, String(index)], stack));
    if (!isJsonObject(node)) return node;
    if (typeof node.$ref === 'string') return this.resolveRef(node, node.$ref, file, at, stack);
    const copy: JsonObject = {};
    for (const [key, value] of Object.entries(node)) copy[key] = this.walk(value, file, [...at, key], stack);
    return copy;
  }

  private resolveRef(node: JsonObject, ref: string, file: string, at: string[], stack: string[]): JsonValue {
    const problem = (message: string): JsonValue => {
      this.problems.push({ file: this.label(file), where: `$ref ${ref}`, message });
      return { ...node };
    };
    const hash = ref.indexOf('#');
    const filePart = hash < 0 ? ref : ref.slice(0, hash);
    const fragment = hash < 0 ? '' : ref.slice(hash + 1);
    if (/^[a-z][a-z0-9+.-]*:/i.test(filePart)) {
      return problem('remote references are not supported (the build never uses the network); copy the target into a spec file');
    }
    let decodedFilePart: string;
    try {
      decodedFilePart = decodeURI(filePart);
    } catch {
      return problem('the file part of the reference is not valid URI encoding');
    }
    const target = filePart === '' ? file : path.resolve(path.dirname(file), decodedFilePart);
    const siblings = Object.keys(node).filter((key) => key !== '$ref');

    if (target === this.rootFile) {
      if (fragment === '' || fragment === '/') {
        return problem('a reference to the whole root document is not allowed; point at an entry, e.g. #/components/schemas/Name');
      }
      const internal = '#' + fragment;
      this.internalRefs.push({ ref: internal, file, written: ref });
      const copy: JsonObject = {};
      for (const [key, value] of Object.entries(node)) {
        copy[key] = key === '$ref' ? internal : this.walk(value, file, [...at, key], stack);
      }
      return copy;
    }

    const key = `${target}#${fragment}`;
    if (stack.includes(key)) {
      const chain = [...stack.slice(stack.indexOf(key)), key].map((entry) => this.labelKey(entry)).join(' -> ');
      return problem(
        `reference cycle ${chain}; make recursive schemas refer to a root component (../openapi.yaml#/components/schemas/Name) instead`,
      );
    }
    const loaded = this.load(target, { file, ref });
    if (loaded === undefined) return { ...node };
    const resolved = resolvePointer(loaded, fragment);
    if (resolved === undefined) {
      const hint =
        target === file && fragment.startsWith('/components/')
          ? ` (to use a component of the root document write a path to it, e.g. ${path.relative(path.dirname(file), this.rootFile).split(path.sep).join('/')}#${fragment})`
          : '';
      return problem(`${this.label(target)} has nothing at #${fragment}${hint}`);
    }
    const unsupported = siblings.filter((sibling) => !OVERRIDABLE_SIBLINGS.has(sibling));
    if (unsupported.length > 0) {
      return problem(
        `keys next to a $ref to another file (${unsupported.join(', ')}) cannot be kept when the file is inlined; move them into ${this.label(target)}`,
      );
    }
    if (target !== file) this.sources.set(pointerOf(at), this.label(target));
    const inlined = this.walk(resolved, target, at, [...stack, key]);
    if (siblings.length === 0) return inlined;
    if (!isJsonObject(inlined)) return problem(`summary/description next to this $ref need an object target`);
    const merged: JsonObject = { ...inlined };
    for (const sibling of siblings) {
      const value = node[sibling];
      if (value !== undefined) merged[sibling] = this.walk(value, file, [...at, sibling], stack);
    }
    return merged;
  }

  private labelKey(key: string): string {
    const hash = key.indexOf('#');
    const file = this.label(key.slice(0, hash));
    const fragment = key.slice(hash + 1);
    return fragment === '' ? file : `${file}#${fragment}`;
  }

  /** Every reference made internal must point at something in the bundled document. */
  private checkInternalRefs(document: JsonObject): void {
    for (const { ref, file, written } of this.internalRefs) {
      if (resolvePointer(document, ref.slice(1)) === undefined) {
        this.problems.push({
          file: this.label(file),
          where: `$ref ${written}`,
          message: `the root document has nothing at ${ref}; add it under components or fix the name`,
        });
      }
    }
  }
}
