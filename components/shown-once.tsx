'use client';
// A credential shown once, inside the dialog that made it and above its backdrop, so the person sees
// and copies it before closing: a runtime key's secret, a personal access token.
import { useState } from 'react';
import { Button } from '@/components/ui/button.tsx';

export function ShownOnce({ value, noun, testId }: { value: string; noun: 'secret' | 'token'; testId: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm">
      <div className="font-medium">Copy this {noun} now; it will not be shown again.</div>
      <code className="mono mt-1 block break-all select-all" data-testid={testId}>
        {value}
      </code>
      <Button
        type="button"
        size="sm"
        variant="secondary"
        className="mt-2"
        onClick={async () => {
          // The clipboard API exists only on secure origins (https, localhost); elsewhere select-all helps.
          if (!navigator.clipboard) return;
          await navigator.clipboard.writeText(value);
          setCopied(true);
        }}
      >
        {copied ? 'Copied' : `Copy ${noun}`}
      </Button>
    </div>
  );
}
