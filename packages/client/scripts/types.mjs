// The package's type declarations, dist/types/*.d.ts, as a project that installs the package
// reads them: they must stand on their own. The SDK's sources name the market's answers by the
// Market Manager's router type (src/sdk/wire.ts), which exists only in this repository, so each of
// those is written out here in full, from the compiler's own view of it; the typed tRPC client
// itself is internal (`@internal`, left out). Then only the files the entry points reach are
// kept, relative imports name the .js files a project resolves, and the build fails if any file
// still imports a package other than zod (the package's one dependency).
import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(pkg, "dist", "types");
const ENTRIES = ["index.d.ts", "job-file/index.d.ts"];
/** Packages the declarations may import: the dependencies of the published package. */
const ALLOWED = /^zod(\/|$)/;

function fail(message) {
  throw new Error(`@cyclemarket/client declarations: ${message}`);
}

/** A type as text, written out in full where the compiler can. */
function typeText(checker, printer, source, type) {
  const flags = ts.NodeBuilderFlags.NoTruncation | ts.NodeBuilderFlags.InTypeAlias | ts.NodeBuilderFlags.MultilineObjectLiterals | ts.NodeBuilderFlags.IgnoreErrors;
  const node = checker.typeToTypeNode(type, source, flags);
  return node ? printer.printNode(ts.EmitHint.Unspecified, node, source) : null;
}

/**
 * src/sdk/wire.ts with every type alias written out as the compiler sees it. A type named inside
 * one (an enum of the database's schema, say) is printed by the compiler as `import("...").Name`;
 * each such name is written out too, as a type of this file, until none is left.
 */
function expandedWire(program, file) {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const printer = ts.createPrinter({ removeComments: false });
  const lines = ["// Written out by scripts/types.mjs from the Market Manager's answers (src/sdk/wire.ts)."];
  const named = new Map();
  const IMPORTED = /import\("([^"]+)"\)\.([A-Za-z_$][\w$]*)/g;
  const localise = (text) => {
    for (const [, path, name] of text.matchAll(IMPORTED)) {
      const key = `${path}#${name}`;
      if ([...named.values()].some((n) => n.key === key)) continue;
      if (named.has(name)) fail(`two types named ${name}`);
      const module = program.getSourceFile(`${path}.ts`) ?? program.getSourceFile(`${path}.d.ts`);
      const symbol = module && checker.getExportsOfModule(checker.getSymbolAtLocation(module)).find((s) => s.name === name);
      if (!symbol) fail(`cannot find ${name} in ${path}`);
      named.set(name, { key, text: null });
      const body = typeText(checker, printer, source, checker.getDeclaredTypeOfSymbol(symbol));
      if (!body || body.includes(`import("${path}").${name}`)) fail(`cannot write out ${name} of ${path}`);
      named.set(name, { key, text: localise(body) });
    }
    return text.replace(IMPORTED, "$2");
  };
  for (const statement of source.statements) {
    if (!ts.isTypeAliasDeclaration(statement) || !statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    const text = typeText(checker, printer, source, checker.getTypeAtLocation(statement.name));
    if (!text) fail(`cannot write out ${statement.name.text}`);
    const doc = ts.getJSDocCommentsAndTags(statement).map((d) => d.getFullText().trim()).join("\n");
    lines.push(`${doc ? doc + "\n" : ""}export type ${statement.name.text} = ${localise(text)};`);
  }
  for (const [name, { text }] of named) lines.push(`type ${name} = ${text};`);
  const all = lines.join("\n") + "\n";
  if (/\bimport\(|\bany\b/.test(all)) fail(`src/sdk/wire.ts refers to a type that cannot be written out here:\n${all.slice(0, 4000)}`);
  return all;
}

/** Relative module specifiers of a declaration file, and the package ones. */
function specifiers(text) {
  const found = [];
  for (const m of text.matchAll(/(?:from\s*|import\s*\(\s*|import\s+)["']([^"']+)["']/g)) found.push(m[1]);
  return found;
}

export async function buildTypes() {
  const config = ts.getParsedCommandLineOfConfigFile(join(pkg, "tsconfig.build.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail(ts.flattenDiagnosticMessageText(d.messageText, "\n")) });
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const wireFile = resolve(pkg, "src", "sdk", "wire.ts");
  const wire = expandedWire(program, wireFile);
  const emitted = new Map();
  const result = program.emit(undefined, (name, text) => emitted.set(resolve(name), text), undefined, true);
  const errors = [...program.getSemanticDiagnostics(), ...result.diagnostics].filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length) fail(ts.formatDiagnostics(errors, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => pkg, getNewLine: () => "\n" }));
  emitted.set(join(out, "sdk", "wire.d.ts"), wire);

  // Only what the entry points reach, with `.ts` specifiers as the `.js` ones a project resolves.
  const keep = new Map();
  const visit = (path) => {
    if (keep.has(path)) return;
    const text = emitted.get(path);
    if (text === undefined) fail(`${relative(out, path)} is imported but was not emitted`);
    const rewritten = text.replace(/(["'])(\.\.?\/[^"']+)\.ts\1/g, "$1$2.js$1");
    keep.set(path, rewritten);
    for (const spec of specifiers(rewritten)) {
      if (spec.startsWith(".")) visit(resolve(dirname(path), spec.replace(/\.js$/, ".d.ts")));
      else if (!ALLOWED.test(spec)) fail(`${relative(out, path)} imports ${spec}, which a project that installs the package does not have`);
    }
  };
  for (const entry of ENTRIES) visit(join(out, entry));
  await rm(out, { recursive: true, force: true });
  for (const [path, text] of keep) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  }
  return keep.size;
}
