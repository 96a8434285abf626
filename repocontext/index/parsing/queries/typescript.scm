; inherits: ecma
; TypeScript additions to ecma.scm.

(abstract_class_declaration name: (_) @name) @definition.class

(interface_declaration name: (_) @name) @definition.interface

(type_alias_declaration name: (_) @name) @definition.type

(enum_declaration name: (_) @name) @definition.enum

(internal_module name: [(identifier) (nested_identifier)] @name) @definition.namespace

(module name: [(identifier) (nested_identifier)] @name) @definition.namespace

(interface_body (method_signature name: (_) @name) @definition.method)

(abstract_method_signature name: (_) @name) @definition.method

(function_signature name: (identifier) @name) @definition.function

(public_field_definition
  name: (_) @name
  value: [(arrow_function) (function_expression)]) @definition.method
