export const projectRoot: string;

/** Folders (or single .ts files) relative to the project root, and folders of theirs left out. */
export interface SourceSet {
  folders: readonly string[];
  skipped: readonly string[];
}

export const RUN_SOURCES: SourceSet;

export function sourceFiles(sources?: SourceSet): string[];

export function transpiledSources(sources?: SourceSet, files?: readonly string[]): string;
