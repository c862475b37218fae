import { act, render, screen } from '@testing-library/react';
import { appendToast, TOAST_CONFIG, useToast } from './toast-context';
import { ToastProvider } from './toaster';

function Trigger() {
  const show = useToast();
  return (
    <button onClick={() => show({ title: 'New feedback', description: 'Ana left a comment' })}>go</button>
  );
}

describe('TOAST_CONFIG', () => {
  it('follows the spec: 5000 ms, swipe right past 50, 100 kept, F8', () => {
    expect(TOAST_CONFIG).toEqual({
      durationMs: 5000,
      swipeDirection: 'right',
      swipeThreshold: 50,
      maxKept: 100,
      hotkey: ['F8'],
    });
  });
});

describe('appendToast', () => {
  it('keeps only the newest 100', () => {
    let list: number[] = [];
    for (let i = 1; i <= 105; i++) list = appendToast(list, i);
    expect(list).toHaveLength(100);
    expect(list[0]).toBe(6);
    expect(list.at(-1)).toBe(105);
  });
});

describe('ToastProvider', () => {
  it('shows the title and message, and closes itself after 5 seconds', () => {
    vi.useFakeTimers();
    try {
      render(
        <ToastProvider>
          <Trigger />
        </ToastProvider>,
      );
      act(() => screen.getByRole('button', { name: 'go' }).click());
      expect(screen.getByText('New feedback')).toBeInTheDocument();
      expect(screen.getByText('Ana left a comment')).toBeInTheDocument();
      expect(screen.getByRole('region', { name: /F8/ })).toBeInTheDocument();
      act(() => vi.advanceTimersByTime(4900));
      expect(screen.getByText('New feedback')).toBeInTheDocument();
      act(() => vi.advanceTimersByTime(200));
      expect(screen.queryByText('New feedback')).not.toBeInTheDocument();
    } finally {
      vi.useRealTimers();
    }
  });
});
