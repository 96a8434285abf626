; inherits: typescript
; TSX parses with its own grammar; the TypeScript patterns apply unchanged.
