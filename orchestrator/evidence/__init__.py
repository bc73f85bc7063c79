"""What the hosts say about their measuring conditions, read and judged into validity flags."""
