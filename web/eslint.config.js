import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import reactRefresh from 'eslint-plugin-react-refresh';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'e2e/.artifacts'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.strict],
    languageOptions: { ecmaVersion: 2022, globals: globals.browser },
    plugins: { 'react-hooks': reactHooks, 'react-refresh': reactRefresh },
    rules: {
      ...reactHooks.configs.recommended.rules,
      // Providers export their hook beside the component on purpose.
      'react-refresh/only-export-components': 'off',
      // Features never import each other; shared code lives in components/ and lib/.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../features/*', '../../features/*/*'],
              message: 'Import features through @/features/<name> from app/ only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['e2e/**/*.mjs', 'bench/**/*.mjs', 'public/**/*.js', '*.config.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      ecmaVersion: 2022,
      globals: { ...globals.node, ...globals.browser, ...globals.serviceworker },
    },
  },
);
