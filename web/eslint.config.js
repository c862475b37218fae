import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import reactRefresh from 'eslint-plugin-react-refresh';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Import zones, as bulletproof-react enforces them: code flows one way,
// shared (components, lib, types, config) → features → app. A feature never
// imports another feature or app/; shared code imports neither. The loupe
// console (src/console) is a second app on the same shared code: it imports
// neither the features nor app/, nothing imports it, and it never touches the
// Firebase SDK (it speaks to loupe's admin endpoints). Only each feature's
// api/ and lib/firebase*.ts touch the Firebase SDK (type-only imports are
// fine anywhere).
const features = readdirSync(new URL('./src/features', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

const firebaseSdk = {
  regex: '^(firebase|@firebase/[^/]+|react-firebase-hooks)(/.*)?$',
  allowTypeImports: true,
  message: 'Only a feature’s api/ and lib/firebase.ts touch the Firebase SDK; use them through hooks.',
};
const intoApp = {
  group: ['@/app', '@/app/*', '**/app/*'],
  message: 'Nothing imports app/: it composes the features.',
};
const intoFeatures = {
  group: ['@/features', '@/features/*', '**/features/*'],
  message:
    'Shared code (components, lib, types) never imports a feature; move what both need to lib/ or components/.',
};
const intoConsole = {
  group: ['@/console', '@/console/*', '**/console/*'],
  message: 'The console is its own app: share through lib/ or components/ instead.',
};
const zones = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'e2e/.artifacts', 'e2e/fixtures/functions/v2/lib'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.strict],
    languageOptions: { ecmaVersion: 2022, globals: globals.browser },
    plugins: { 'react-hooks': reactHooks, 'react-refresh': reactRefresh },
    rules: {
      ...reactHooks.configs.recommended.rules,
      // Providers export their hook beside the component on purpose.
      'react-refresh/only-export-components': 'off',
    },
  },
  {
    files: ['src/{components,lib,types,config,test}/**/*.{ts,tsx}'],
    rules: zones(firebaseSdk, intoApp, intoFeatures, intoConsole),
  },
  { files: ['src/lib/firebase*.ts'], rules: zones(intoApp, intoFeatures, intoConsole) },
  { files: ['src/app/**/*.{ts,tsx}', 'src/main.tsx'], rules: zones(firebaseSdk, intoConsole) },
  { files: ['src/console/**/*.{ts,tsx}'], rules: zones(firebaseSdk, intoApp, intoFeatures) },
  ...features.flatMap((feature) => {
    const others = features.filter((f) => f !== feature);
    const intoOtherFeatures = {
      group: others.flatMap((f) => [`@/features/${f}`, `@/features/${f}/*`, `../${f}/*`, `../../${f}/*`]),
      message: `A feature never imports another feature: compose them in app/, or share through lib/ or components/.`,
    };
    return [
      {
        files: [`src/features/${feature}/**/*.{ts,tsx}`],
        rules: zones(firebaseSdk, intoApp, intoOtherFeatures, intoConsole),
      },
      {
        files: [`src/features/${feature}/api/**/*.{ts,tsx}`],
        rules: zones(intoApp, intoOtherFeatures, intoConsole),
      },
    ];
  }),
  {
    files: ['e2e/**/*.mjs', 'bench/**/*.mjs', 'public/**/*.js', '*.config.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      ecmaVersion: 2022,
      globals: { ...globals.node, ...globals.browser, ...globals.serviceworker },
    },
  },
);
