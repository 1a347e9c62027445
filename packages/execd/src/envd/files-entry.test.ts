import { describe, expect, test } from "vitest";
import { permissionString } from "./files-entry.js";

describe("permissionString", () => {
  test("spells modes as Go's fs.FileMode does, as envd sends them", () => {
    expect(permissionString(0o100644)).toBe("-rw-r--r--");
    expect(permissionString(0o040755)).toBe("drwxr-xr-x");
    expect(permissionString(0o120777)).toBe("Lrwxrwxrwx");
    expect(permissionString(0o041777)).toBe("dtrwxrwxrwx");
    expect(permissionString(0o104755)).toBe("urwxr-xr-x");
    expect(permissionString(0o020666)).toBe("Dcrw-rw-rw-");
    expect(permissionString(0o010600)).toBe("prw-------");
    expect(permissionString(0o140755)).toBe("Srwxr-xr-x");
  });
});
