; Outline patterns shared by JavaScript, TypeScript and TSX (not a language of its own).
; Capture names are described in python.scm.

(class_declaration name: (_) @name) @definition.class

(function_declaration name: (identifier) @name) @definition.function

(generator_function_declaration name: (identifier) @name) @definition.function

; Methods of classes only: an object literal's methods and getters are not definitions.
(class_body (method_definition name: (_) @name) @definition.method)

((program
  (lexical_declaration
    kind: "const"
    (variable_declarator name: (identifier) @name) @definition.constant))
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

((program
  (export_statement
    declaration: (lexical_declaration
      kind: "const"
      (variable_declarator name: (identifier) @name) @definition.constant)))
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

; Later than the constant patterns, so `const RUN = () => {}` is a function.
(lexical_declaration
  kind: "const"
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)

; `let` and `var` functions count at file level only (inside a function they are locals).
(program
  [
    (lexical_declaration
      kind: "let"
      (variable_declarator
        name: (identifier) @name
        value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)
    (variable_declaration
      (variable_declarator
        name: (identifier) @name
        value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)
    (export_statement
      declaration: [
        (lexical_declaration
          kind: "let"
          (variable_declarator
            name: (identifier) @name
            value: [(arrow_function) (function_expression) (generator_function)])
            @definition.function)
        (variable_declaration
          (variable_declarator
            name: (identifier) @name
            value: [(arrow_function) (function_expression) (generator_function)])
            @definition.function)
      ])
  ])

; A file-level const whose value is a function passed through a well-known wrapper
; (`memo(() => ...)`, `React.forwardRef(function X() {...})`, `debounce(() => ..., 100)`) is
; a function too; other calls taking a function (`rows.map(...)`) make data, not functions.
((program
  (lexical_declaration
    kind: "const"
    (variable_declarator
      name: (identifier) @name
      value: (call_expression
        function: (_) @_wrapper
        arguments: (arguments . [(arrow_function) (function_expression)]))) @definition.function))
  (#match? @_wrapper "^(React[.])?(memo|forwardRef|lazy)$|^(observer|debounce|throttle|once|memoize)$"))

((program
  (export_statement
    declaration: (lexical_declaration
      kind: "const"
      (variable_declarator
        name: (identifier) @name
        value: (call_expression
          function: (_) @_wrapper
          arguments: (arguments . [(arrow_function) (function_expression)]))) @definition.function)))
  (#match? @_wrapper "^(React[.])?(memo|forwardRef|lazy)$|^(observer|debounce|throttle|once|memoize)$"))

(import_statement source: (string (string_fragment) @spec)) @import.js

(export_statement source: (string (string_fragment) @spec)) @import.js

((call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @spec) .)) @import.js
  (#eq? @_require "require"))

(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @spec))) @import.js
