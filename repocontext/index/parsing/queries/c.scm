; Outline of a C file (C++ builds on it). Capture names are described in python.scm.
; Function prototypes at file level are outlined too (they are what a header holds), also
; inside preprocessor conditionals (include guards, #ifdef blocks) and extern "C"; local
; prototypes in function bodies are not. A typedef's signature is its first line, not the
; line of its name.

(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator
      declarator: (pointer_declarator
        declarator: (function_declarator declarator: (identifier) @name)))
  ]) @definition.function

((declaration
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator
      declarator: (pointer_declarator
        declarator: (function_declarator declarator: (identifier) @name)))
  ]) @definition.function
  (#directly-in? @definition.function translation_unit declaration_list linkage_specification))

(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct

(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct

(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum

(type_definition
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
    (function_declarator
      declarator: (parenthesized_declarator
        (pointer_declarator declarator: (type_identifier) @name)))
    (function_declarator declarator: (type_identifier) @name)
    (function_declarator declarator: (parenthesized_declarator (type_identifier) @name))
    (array_declarator declarator: (type_identifier) @name)
  ]) @definition.type @signature

(preproc_def name: (identifier) @name) @definition.macro

(preproc_function_def name: (identifier) @name) @definition.macro

(preproc_include path: (_) @spec) @import.c_include
