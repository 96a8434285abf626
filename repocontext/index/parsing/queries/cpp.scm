; inherits: c
; C++ additions to c.scm. A function defined with a qualified name (`Circle::area`) is a
; method of the scope; functions directly inside a class or struct are methods. c.scm's
; prototype pattern also finds prototypes in namespace bodies (a declaration_list, like
; extern "C" { ... }); here only those returning a reference are added. Preprocessor
; conditionals are looked through in namespaces and class bodies as at file level.

(class_specifier name: (_) @name body: (field_declaration_list)) @definition.class

(struct_specifier name: (_) @name body: (field_declaration_list)) @definition.struct

(namespace_definition name: (_) @name) @definition.namespace

(alias_declaration name: (type_identifier) @name) @definition.type

(function_definition
  declarator: [
    (function_declarator
      declarator: [
        (field_identifier) (qualified_identifier) (destructor_name) (operator_name)
      ] @name)
    (pointer_declarator
      declarator: (function_declarator
        declarator: [(field_identifier) (qualified_identifier) (operator_name)] @name))
    (reference_declarator
      (function_declarator
        declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name)] @name))
    (function_declarator declarator: (template_function name: (identifier) @name))
  ]) @definition.function

((declaration
  declarator: (reference_declarator (function_declarator declarator: (identifier) @name)))
  @definition.function
  (#directly-in? @definition.function translation_unit declaration_list linkage_specification))

((field_declaration
  declarator: [
    (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator
      declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name))
    (reference_declarator
      (function_declarator declarator: [(field_identifier) (operator_name)] @name))
  ]) @definition.method
  (#directly-in? @definition.method field_declaration_list)
  (#not-match? @name "^[A-Z][A-Z0-9]*(_[A-Z0-9]*)+$"))

((declaration
  declarator: (function_declarator
    declarator: [(identifier) (destructor_name)] @name)) @definition.method
  (#directly-in? @definition.method field_declaration_list)
  (#not-match? @name "^[A-Z][A-Z0-9]*(_[A-Z0-9]*)+$"))

; Conversion operators (`operator bool() const`): named `operator <type>`; @cast marks them.
(function_definition declarator: (operator_cast type: (_) @name) @cast) @definition.function

((declaration declarator: (operator_cast type: (_) @name) @cast) @definition.method
  (#directly-in? @definition.method field_declaration_list))

(function_definition
  declarator: (qualified_identifier
    scope: (_) @scope
    name: (operator_cast type: (_) @name) @cast)) @definition.method

; Catch2 and doctest test cases: `TEST_CASE("name", "[tag]") { ... }` reads as a call
; statement followed by a block; the definition is the call, named by its whole head like a
; GoogleTest case, and spans the block (@body).
((expression_statement
  (call_expression function: (identifier) @name)) @definition.function
  .
  (compound_statement) @body
  (#match? @name "^(TEST_CASE|TEST_CASE_METHOD|TEST_CASE_FIXTURE|SCENARIO|SCENARIO_METHOD)$"))
